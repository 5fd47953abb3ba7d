import { JobQueueError } from '../errors/job-queue.error';

/** Work `drain()` found and why it is (still) open. */
export interface StuckWork {
  type: string;
  group: string;
  state: string;
  count: number;
  firstId: number;
  reason: string;
}

function describe(stuck: readonly StuckWork[]): string {
  return stuck
    .slice(0, 20)
    .map((s) => `${s.count} ${s.state} '${s.type}' job${s.count === 1 ? '' : 's'} (group '${s.group}', first id ${s.firstId}): ${s.reason}`)
    .join('; ');
}

/** `drain()` found ready jobs that can never run in this testing module (no handler, or paused). */
export class DrainStuckError extends JobQueueError {
  readonly code = 'DRAIN_STUCK';
  constructor(readonly stuck: readonly StuckWork[]) {
    super(`drain() cannot finish: ${describe(stuck)}.`);
  }
}

/** `drain()` did not settle within its timeout (a handler that never resolves, or work that keeps coming). */
export class DrainTimeoutError extends JobQueueError {
  readonly code = 'DRAIN_TIMEOUT';
  constructor(
    readonly timeoutMs: number,
    readonly open: readonly StuckWork[],
  ) {
    super(
      `drain() did not settle within ${timeoutMs} ms; still open: ${describe(open)}. ` +
        `Raise drain({ timeoutMs }) for slow handlers, or look for a handler that never resolves or keeps enqueueing.`,
    );
  }
}

/** `run(type)` for a type without a `@JobHandler` in the testing module. */
export class TestingHandlerNotFoundError extends JobQueueError {
  readonly code = 'TESTING_HANDLER_NOT_FOUND';
  constructor(
    readonly type: string,
    readonly known: readonly string[],
  ) {
    super(
      `run('${type}'): no @JobHandler('${type}') is registered` +
        (known.length ? ` (registered: ${known.map((t) => `'${t}'`).join(', ')})` : '') +
        `. Add the provider that declares it to the testing module's providers.`,
    );
  }
}

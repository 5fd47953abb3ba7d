import type { JobRecord } from '../database/job-row';
import { JobTimeoutError, UnrecoverableJobError } from './job-abort.errors';
import { JobContext, type JobContextIO } from './job-context';
import type { RegisteredJobHandler } from './job-handler.registry';

export type RunOutcome =
  | { kind: 'done'; resultJson: string }
  | { kind: 'failed'; error: string; final: boolean }
  /** Cancelled, lease lost or shutdown: nothing is written for this attempt. */
  | { kind: 'aborted'; reason: unknown };

/**
 * Runs one attempt of a job. Resolves as soon as the handler settles, the per-attempt timeout
 * elapses, or `controller` aborts, whichever is first: a hung handler cannot hold the slot or
 * the finalize (it keeps running detached, with its signal aborted).
 */
export async function runJob(
  job: JobRecord,
  handler: RegisteredJobHandler,
  controller: AbortController,
  timeoutMs: number | null,
  io: JobContextIO,
): Promise<RunOutcome> {
  const ctx = new JobContext(
    {
      id: job.id,
      type: job.type,
      attempt: job.attempts,
      maxAttempts: job.maxAttempts,
      group: job.group,
      parentId: job.parentId,
      signal: controller.signal,
    },
    io,
  );
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<RunOutcome>((resolve) => {
    onAbort = () => resolve(abortOutcome(controller.signal.reason));
    controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  const timer = timeoutMs ? setTimeout(() => controller.abort(new JobTimeoutError(timeoutMs)), timeoutMs) : undefined;
  const work = (async (): Promise<RunOutcome> => {
    try {
      const result = await handler.handle(job.args, ctx);
      return { kind: 'done', resultJson: serializeResult(result) };
    } catch (err) {
      if (controller.signal.aborted) return abortOutcome(controller.signal.reason);
      return { kind: 'failed', error: describeError(err), final: err instanceof UnrecoverableJobError };
    }
  })();
  try {
    return await Promise.race([work, aborted]);
  } finally {
    clearTimeout(timer);
    controller.signal.removeEventListener('abort', onAbort);
  }
}

function abortOutcome(reason: unknown): RunOutcome {
  if (reason instanceof JobTimeoutError) return { kind: 'failed', error: describeError(reason), final: false };
  return { kind: 'aborted', reason };
}

function serializeResult(result: unknown): string {
  try {
    return JSON.stringify(result === undefined ? null : result, (_key, value) => {
      if (typeof value === 'bigint') throw new TypeError('a BigInt is not JSON');
      return value;
    });
  } catch (err) {
    throw new Error(`the handler's result cannot be stored as JSON: ${(err as Error).message}`);
  }
}

export function describeError(err: unknown): string {
  if (err instanceof Error) return err.stack && err.stack.includes(err.message) ? err.stack : `${err.name}: ${err.message}`;
  return typeof err === 'string' ? err : JSON.stringify(err) ?? String(err);
}

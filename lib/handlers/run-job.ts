import type { ClaimedJob } from '../claim/claimed-job';
import { ResultTooLargeError } from '../errors/job.errors';
import type { AttemptController } from './attempt-controller';
import { JobTimeoutError, SnoozeJobError, UnrecoverableJobError } from './job-abort.errors';
import { JobContext, type JobContextIO } from './job-context';
import type { RegisteredJobHandler } from './job-handler.registry';

export type RunOutcome =
  | { kind: 'done'; resultJson: string }
  /** `cause`: what the handler threw (or the timeout), for instrumentation to record. */
  | { kind: 'failed'; error: string; final: boolean; cause?: unknown }
  /** The handler snoozed (SnoozeJobError): runs again after `delayMs`, the attempt given back. */
  | { kind: 'snoozed'; delayMs: number }
  /** Cancelled, lease lost or shutdown: nothing is written for this attempt. */
  | { kind: 'aborted'; reason: unknown };

/**
 * Runs one attempt of a job. Resolves as soon as the handler settles, the per-attempt timeout
 * elapses, or `controller` aborts, whichever is first: a hung handler cannot hold the slot or
 * the finalize (it keeps running detached, with its signal aborted).
 */
export function runJob(
  job: ClaimedJob,
  handler: RegisteredJobHandler,
  controller: AttemptController,
  timeoutMs: number | null,
  io: JobContextIO,
  /** Largest result stored (option `maxResultBytes`); a larger one fails the job for good. */
  maxResultBytes = Infinity,
): Promise<RunOutcome> {
  const ctx = new JobContext(job, controller, io);
  return new Promise<RunOutcome>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = (outcome: RunOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      controller.onAbort(undefined);
      resolve(outcome);
    };
    controller.onAbort((reason) => settle(abortOutcome(reason)));
    if (timeoutMs) timer = setTimeout(() => controller.abort(new JobTimeoutError(timeoutMs)), timeoutMs);
    let work: Promise<unknown>;
    try {
      work = Promise.resolve(handler.handle(job.args, ctx));
    } catch (err) {
      work = Promise.reject(err); // a handler that throws before returning its promise
    }
    work.then(
      (result) => {
        try {
          const resultJson = serializeResult(result);
          // Checked here, before the finalize batch: a result the database would refuse must not
          // take the other results of its batch down with it, and the same work would return
          // the same result again, so the attempt fails for good.
          const bytes = resultJson.length <= maxResultBytes / 3 ? resultJson.length : Buffer.byteLength(resultJson, 'utf8');
          if (bytes > maxResultBytes) {
            const tooLarge = new ResultTooLargeError(bytes, maxResultBytes);
            settle({ kind: 'failed', error: `${tooLarge.name}: ${tooLarge.message}`, final: true, cause: tooLarge });
          } else settle({ kind: 'done', resultJson });
        } catch (err) {
          settle({ kind: 'failed', error: describeError(err), final: false, cause: err });
        }
      },
      (err: unknown) => {
        if (controller.aborted) settle(abortOutcome(controller.reason));
        else if (err instanceof SnoozeJobError) settle({ kind: 'snoozed', delayMs: err.delayMs });
        else settle({ kind: 'failed', error: describeError(err), final: err instanceof UnrecoverableJobError, cause: err });
      },
    );
  });
}

function abortOutcome(reason: unknown): RunOutcome {
  if (reason instanceof JobTimeoutError) return { kind: 'failed', error: describeError(reason), final: false, cause: reason };
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

/**
 * The text stored as `last_error`. Never throws: it runs in the handler's rejection callback, and
 * a throw there (JSON.stringify of a circular object or a BigInt) left the attempt unsettled and
 * ended the process with an unhandled rejection.
 */
export function describeError(err: unknown): string {
  try {
    if (err instanceof Error) return err.stack && err.stack.includes(err.message) ? err.stack : `${err.name}: ${err.message}`;
    if (typeof err === 'string') return err;
    try {
      const json = JSON.stringify(err);
      if (json !== undefined) return json;
    } catch {
      // not JSON: its own text, below
    }
    return String(err);
  } catch {
    return Object.prototype.toString.call(err);
  }
}

import { JobQueueError } from '../errors/job-queue.error';

/** `ctx.signal.reason` when the per-attempt timeout elapses; the attempt counts as failed. */
export class JobTimeoutError extends JobQueueError {
  readonly code = 'JOB_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
  }
}

/** `ctx.signal.reason` when the job was cancelled while running. */
export class JobCancelledError extends JobQueueError {
  readonly code = 'JOB_CANCELLED';
  constructor(readonly jobId: number) {
    super(`job ${jobId} was cancelled`);
  }
}

/** `ctx.signal.reason` when this worker no longer holds the job's lease (expired and reclaimed, or failed by a sweep). */
export class LeaseLostError extends JobQueueError {
  readonly code = 'LEASE_LOST';
  constructor(readonly jobId: number) {
    super(`lease of job ${jobId} was lost; another worker may run it`);
  }
}

/** `ctx.signal.reason` when the application shuts down past the grace period; the job goes back to `ready`. */
export class ShutdownAbortError extends JobQueueError {
  readonly code = 'SHUTDOWN';
  constructor() {
    super('the worker is shutting down; the job was handed back to the queue');
  }
}

/** Throw from a handler to fail the job at once, without the remaining attempts. */
export class UnrecoverableJobError extends JobQueueError {
  readonly code = 'UNRECOVERABLE';
}

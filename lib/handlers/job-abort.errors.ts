import { JobQueueError } from '../errors/job-queue.error';
import { InvalidJobError } from '../errors/job.errors';

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

/**
 * Throw from a handler (or call `ctx.snooze(delayMs)`) to run the job again after `delayMs`
 * without spending an attempt: for work that is not ready yet (an export still rendering, a
 * partner's 429 with Retry-After). The job goes back to `ready` with a later `runAfter`; its
 * attempt count is given back and its `snoozes` count goes up; no error is recorded.
 */
export class SnoozeJobError extends JobQueueError {
  readonly code = 'SNOOZE';
  readonly delayMs: number;
  constructor(delayMs: number) {
    const ms = snoozeDelayMs(delayMs);
    super(`snoozed for ${ms} ms`);
    this.delayMs = ms;
  }
}

/** The longest snooze: a year. Longer is a schedule, not a snooze. */
export const MAX_SNOOZE_MS = 365 * 24 * 3_600_000;

/** A snooze's delay as stored: whole milliseconds, 0 to MAX_SNOOZE_MS; anything else is the handler's bug. */
export function snoozeDelayMs(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_SNOOZE_MS) {
    throw new InvalidJobError('snooze delayMs', `a number of milliseconds from 0 to ${MAX_SNOOZE_MS} (365 days)`, value);
  }
  return Math.ceil(value);
}

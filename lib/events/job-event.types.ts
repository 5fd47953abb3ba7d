import type { JobView } from '../job.types';

/** The lifecycle events `@OnJobEvent` listens to (DESIGN.md, "Next: the product surface"). */
export type JobEventName = 'enqueued' | 'started' | 'progress' | 'completed' | 'retrying' | 'snoozed' | 'failed' | 'cancelled';

export const JOB_EVENT_NAMES: readonly JobEventName[] = ['enqueued', 'started', 'progress', 'completed', 'retrying', 'snoozed', 'failed', 'cancelled'];

/** What happened besides the job itself: the second argument of an `@OnJobEvent` method. */
export interface JobEventDetail {
  event: JobEventName;
  /** `retrying` and `failed`: the attempt's error (for a cascade, why the job failed). */
  error?: string;
  /** `started`, `retrying`, `snoozed`, `failed`, `completed`: the attempt (1 for the first), when this process ran it. */
  attempt?: number;
  /** `completed`, `retrying`, `snoozed`, `failed` of an attempt this process ran: how long the handler ran, in ms. */
  durationMs?: number;
  /** `snoozed`: ms until the job may run again (the handler's `ctx.snooze` delay). */
  delayMs?: number;
  /** `progress`: what the handler reported. */
  percent?: number;
  stage?: string | null;
  /** When the change was committed (this process's clock). */
  at: Date;
}

/** An `@OnJobEvent` method: the job as read after the change, and what happened. */
export type JobEventListener = (job: JobView, detail: JobEventDetail) => unknown;

import type { JobView } from '../job.types';

export interface WaitForOptions {
  /** Reject with `WaitForTimeoutError` after this long. Default: wait until the job finishes. */
  timeoutMs?: number;
}

/** Callbacks of one watched job id (see `JobWaiters.watch`). */
export interface JobWatchHandlers {
  /** The job is done, failed or cancelled; called once, then the watch ends. */
  settled(job: JobView): void;
  /** The job does not exist (any more), its first lookup failed, or the application is closing; the watch ends. */
  failed(err: Error): void;
}

/** What the watcher has done since the process started: for the benchmark, metrics, and curious users. */
export interface JobWaitersCounters {
  /** Watches (waitFor calls and watch() subscriptions) pending now, and their distinct job ids. */
  pending: number;
  pendingIds: number;
  /** Poll rounds, and the statements they ran (one per chunk of pending ids, two for a chunk with deleted jobs). */
  polls: number;
  pollQueries: number;
  /** Batched first lookups of new watches. */
  lookupQueries: number;
  /** Batched reads of settled jobs, to resolve their waiters with. */
  fetchQueries: number;
  /** Settled-job notifications received (PostgreSQL). */
  notifications: number;
  resolved: number;
}

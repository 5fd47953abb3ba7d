import type { JobState } from '../job.types';

/** `JobQueueService.stats()`: a snapshot for dashboards and health checks. */
export interface QueueStats {
  /** Jobs per state, every state present (0 when none). */
  byState: Record<JobState, number>;
  /**
   * Per group with open work: jobs ready to run and jobs in flight (leased or running). The
   * `groupsLimit` busiest (most ready + in flight, then by name), so thousands of tenants do not
   * make every snapshot as long as the tenant list.
   */
  groups: Array<{ group: string; ready: number; running: number }>;
  /** Groups with jobs ready or in flight, all of them (`groups` lists the busiest). */
  groupCount: number;
  /** Jobs in flight across the cluster. */
  running: number;
  /** Age of the longest-waiting claimable job, in ms (0 when none). */
  oldestReadyAgeMs: number;
  /** Jobs finished within the last `windowMs` (exact; SQLite reads them in slices between turns of the event loop). */
  recent: {
    windowMs: number;
    done: number;
    failed: number;
    /** failed / (done + failed); 0 when nothing finished. */
    failureRate: number;
    /** Mean started → finished time of the `done` ones, in ms (null when none). */
    meanDurationMs: number | null;
  };
  /**
   * Recurring schedules due soonest (`schedulesLimit` of them, by next slot, then name): the next
   * slot to enqueue and the latest enqueued (null before the first). `findSchedules` pages through all.
   */
  schedules: Array<{ name: string; nextRunAt: Date; lastRunAt: Date | null }>;
  /** Recurring schedules in all. */
  scheduleCount: number;
}

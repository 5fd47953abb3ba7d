import type { Backfill } from './schedule-definition';

/** A recurring schedule as `listSchedules()` and `stats()` show it. */
export interface ScheduleView {
  name: string;
  cron: string;
  timeZone: string;
  type: string;
  args: Record<string, unknown>;
  backfill: Backfill;
  misfireGraceMs: number;
  maxAttempts?: number;
  timeoutMs?: number;
  group?: string;
  priority?: number;
  /** The next slot to be enqueued. */
  nextRunAt: Date;
  /** The latest slot enqueued (null before the first). */
  lastRunAt: Date | null;
  /**
   * An `@Recurring` schedule fires until then, unless a running process that declares it renews
   * it first (each does so every `leaseTtlMs`); past it, the schedule is dormant. Null for a
   * schedule made by `schedule()`, which fires until `unschedule()`.
   */
  declaredUntil: Date | null;
}

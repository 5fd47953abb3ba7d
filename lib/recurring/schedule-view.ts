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
}

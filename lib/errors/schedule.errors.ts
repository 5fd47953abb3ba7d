import { JobQueueError } from './job-queue.error';

/**
 * A recurring schedule is malformed: a cron expression the `cron` library rejects (e.g. 7
 * fields), an unknown time zone, a bad name or backfill. Raised at start-up for `@Recurring`
 * methods and by `queue.schedule()`, before anything is written.
 */
export class InvalidScheduleError extends JobQueueError {
  readonly code = 'INVALID_SCHEDULE';

  constructor(
    /** The schedule's name (or `(unnamed)`). */
    readonly schedule: string,
    readonly reason: string,
  ) {
    super(`Recurring schedule "${schedule}": ${reason}`);
  }
}

/** `triggerSchedule()` (or the dashboard's Remove) named no stored schedule (never made, or removed). Nothing was changed. */
export class ScheduleNotFoundError extends JobQueueError {
  readonly code = 'SCHEDULE_NOT_FOUND';

  constructor(
    /** The name asked for. */
    readonly schedule: string,
  ) {
    super(`No recurring schedule named ${JSON.stringify(schedule.length > 200 ? `${schedule.slice(0, 200)}…` : schedule)}.`);
  }
}

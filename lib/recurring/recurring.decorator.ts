import { SetMetadata, applyDecorators } from '@nestjs/common';
import { JOB_HANDLER_METADATA, RECURRING_METADATA } from '../job-queue.constants';
import type { JobHandlerMetadata } from '../handlers/job-handler.decorator';
import type { ScheduleInput } from './schedule-definition';

/** `@Recurring` options: the schedule's name plus what `queue.schedule()` takes besides cron and type. */
export type RecurringOptions = Omit<ScheduleInput, 'cron' | 'type'>;

/**
 * The args each recurring job gets: its slot time (ISO, UTC), `backfill: true` for a caught-up
 * missed slot, and `manual: true` for a run asked for by `triggerSchedule()` (its `slot` is then
 * the time it was asked for).
 */
export interface RecurringArgs {
  slot: string;
  backfill?: true;
  manual?: true;
}

/**
 * Cluster-safe recurring work: the method becomes the handler of job type `options.name`, and
 * every slot of `cron` (read in `timeZone`) is enqueued once across all replicas, as a job with
 * args `{ slot }`. Checked at start-up (InvalidScheduleError); the schedule is stored in
 * `job_queue_schedules` at start-up.
 */
export function Recurring(cron: string, options: RecurringOptions): MethodDecorator {
  const type = typeof options?.name === 'string' ? options.name : '';
  const handler: JobHandlerMetadata = {
    type,
    options: { maxAttempts: options?.maxAttempts, timeoutMs: options?.timeoutMs },
  };
  return applyDecorators(
    SetMetadata<string, JobHandlerMetadata>(JOB_HANDLER_METADATA, handler),
    SetMetadata<string, ScheduleInput>(RECURRING_METADATA, { ...options, cron, type }),
  );
}

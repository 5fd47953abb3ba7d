import { swapEvery, swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { NULLS } from './1767500000002-job-queue-complete-views';
import { COMPLETE_VIEWS_SQL_V24 } from './1767900000002-job-queue-promotion-slices';

const SIGNATURE = 'job_queue_complete_views(text, bigint[], text[], boolean, text[])';

/** Migration 24's complete with views, its rows carrying `snoozes` too (a `completed` listener's view has it). */
const COMPLETE_VIEWS_SQL_V40 = swapEvery(
  40,
  swapText(40, swapText(40, COMPLETE_VIEWS_SQL_V24, 'lease_expires timestamptz)', 'lease_expires timestamptz, snoozes integer)'), 'd.lease_expires FROM done d', 'd.lease_expires, d.snoozes FROM done d'),
  `${NULLS} FROM`,
  `${NULLS}, NULL FROM`,
  5,
);

/**
 * `snoozes`: how many times a handler snoozed the job (`ctx.snooze`, SnoozeJobError). A snooze gives
 * the attempt back, so `attempts` alone no longer tells how often the job ran; the count lets a
 * handler or an operator bound a job that keeps waiting. A constant default: no table rewrite.
 * The complete with views returns it (a function's result columns change only by DROP and CREATE).
 */
export class JobQueueSnoozesPostgres1769400000001 extends JobQueueMigration {
  readonly version = 40;
  readonly name = 'JobQueueSnoozes1769400000001';
  protected readonly upSql = [`ALTER TABLE jobs ADD COLUMN snoozes integer NOT NULL DEFAULT 0`, `DROP FUNCTION ${SIGNATURE}`, COMPLETE_VIEWS_SQL_V40];
  protected readonly downSql = [`DROP FUNCTION ${SIGNATURE}`, COMPLETE_VIEWS_SQL_V24, `ALTER TABLE jobs DROP COLUMN snoozes`];
}

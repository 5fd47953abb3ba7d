import { JobQueueMigration } from '../job-queue-migration';
import { V8_COLUMNS, nextGroupsProcedure } from './1766500000001-job-queue-next-groups-procedure';

/**
 * The rotation walk's procedure also returns run_after and trace_context, so a job claimed
 * through it reports its wait (job_queue_job_wait_seconds, the `started` event's ready time) and
 * carries its stored trace context (no read after a traced claim) like every other claim.
 * Before, a rotation claim's single-slot jobs came back without it; once an idle worker's
 * rotation claim could serve a lone group again (PostgreSQL migration 18, planRotation) that was
 * no longer one job now and then.
 */
export class JobQueueNextGroupsRunAfterMysql1767400000001 extends JobQueueMigration {
  readonly version = 12;
  readonly name = 'JobQueueNextGroupsRunAfter1767400000001';
  protected readonly upSql = [`DROP PROCEDURE job_queue_next_groups`, nextGroupsProcedure(`${V8_COLUMNS}, run_after, trace_context`)];
  protected readonly downSql = [`DROP PROCEDURE job_queue_next_groups`, nextGroupsProcedure(V8_COLUMNS)];
}

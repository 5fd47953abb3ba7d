import { JobQueueMigration } from '../job-queue-migration';

/**
 * `declared_until`: an `@Recurring` schedule fires only while a running process that declares it
 * renews this lease (NULL: made by `schedule()`, kept until `unschedule()`). Before it, a removed
 * or renamed decorator kept its row, and every worker kept enqueuing jobs nothing handled.
 * `declared_since`: when the current declaration began; slots due while it had lapsed are missed.
 */
export class JobQueueScheduleDeclarationsPostgres1769000000001 extends JobQueueMigration {
  readonly version = 34;
  readonly name = 'JobQueueScheduleDeclarations1769000000001';
  protected readonly upSql = [
    `ALTER TABLE job_queue_schedules ADD COLUMN declared_until timestamptz, ADD COLUMN declared_since timestamptz`,
    // The prune of long-lapsed declarations reads this; runtime schedules (NULL) are left out.
    `CREATE INDEX job_queue_schedules_declared_idx ON job_queue_schedules (declared_until) WHERE declared_until IS NOT NULL`,
  ];
  protected readonly downSql = [`DROP INDEX job_queue_schedules_declared_idx`, `ALTER TABLE job_queue_schedules DROP COLUMN declared_until, DROP COLUMN declared_since`];
}

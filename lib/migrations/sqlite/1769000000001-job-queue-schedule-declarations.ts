import { JobQueueMigration } from '../job-queue-migration';

/** `declared_until` (see the PostgreSQL migration of the same name). */
export class JobQueueScheduleDeclarationsSqlite1769000000001 extends JobQueueMigration {
  readonly version = 18;
  readonly name = 'JobQueueScheduleDeclarations1769000000001';
  protected readonly upSql = [
    `ALTER TABLE job_queue_schedules ADD COLUMN declared_until TEXT`,
    `ALTER TABLE job_queue_schedules ADD COLUMN declared_since TEXT`,
    `CREATE INDEX job_queue_schedules_declared_idx ON job_queue_schedules (declared_until) WHERE declared_until IS NOT NULL`,
  ];
  protected readonly downSql = [`DROP INDEX job_queue_schedules_declared_idx`, `ALTER TABLE job_queue_schedules DROP COLUMN declared_until`, `ALTER TABLE job_queue_schedules DROP COLUMN declared_since`];
}

import { JobQueueMigration } from '../job-queue-migration';

/** `declared_until` (see the PostgreSQL migration of the same name). */
export class JobQueueScheduleDeclarationsMysql1769000000001 extends JobQueueMigration {
  readonly version = 23;
  readonly name = 'JobQueueScheduleDeclarations1769000000001';
  protected readonly upSql = [
    `ALTER TABLE job_queue_schedules ADD COLUMN declared_until DATETIME(3) NULL, ADD COLUMN declared_since DATETIME(3) NULL, ADD KEY job_queue_schedules_declared_idx (declared_until)`,
  ];
  protected readonly downSql = [`ALTER TABLE job_queue_schedules DROP KEY job_queue_schedules_declared_idx, DROP COLUMN declared_until, DROP COLUMN declared_since`];
}

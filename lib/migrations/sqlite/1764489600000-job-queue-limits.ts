import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueLimitsSqlite1764489600000 extends JobQueueMigration {
  readonly version = 2;
  readonly name = 'JobQueueLimits1764489600000';
  protected readonly upSql = [
    // SQLite claims are serialized by BEGIN IMMEDIATE already; the table keeps the schema uniform.
    `CREATE TABLE job_queue_locks (name TEXT PRIMARY KEY) WITHOUT ROWID`,
    `CREATE INDEX jobs_finished_idx ON jobs (finished_at) WHERE finished_at IS NOT NULL`,
  ];
  protected readonly downSql = [`DROP INDEX jobs_finished_idx`, `DROP TABLE job_queue_locks`];
}

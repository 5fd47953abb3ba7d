import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_logs.level`: `info` for the lines of `ctx.log()`, `error` for the line the finalize writes
 * when an attempt fails (its error): a job's log is also the history of its errors. ADD COLUMN
 * with a constant default is instant on MariaDB 10.3+ and MySQL 8.
 */
export class JobQueueErrorLinesMysql1769500000001 extends JobQueueMigration {
  readonly version = 26;
  readonly name = 'JobQueueErrorLines1769500000001';
  protected readonly upSql = [`ALTER TABLE job_logs ADD COLUMN level VARCHAR(8) NOT NULL DEFAULT 'info'`];
  protected readonly downSql = [`ALTER TABLE job_logs DROP COLUMN level`];
}

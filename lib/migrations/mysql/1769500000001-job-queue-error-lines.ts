import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_logs.level`: `info` for the lines of `ctx.log()`, `error` for the line the finalize writes
 * when an attempt fails (its error): a job's log is also the history of its errors. ADD COLUMN
 * with a constant default is instant on MariaDB 10.3+ and MySQL 8. No index for the error lines
 * alone (PostgreSQL and SQLite have a partial one): without partial indexes, (job_id, level, id)
 * cost every ctx.log() line 13% (`node dist/bench/logs-scale.js mysql 2000 500`: 180,000 →
 * 157,000 lines/s stored, removal 4.9 → 5.9 s), and a job's error page reads its lines instead
 * (84 ms for a job of 100,000 lines).
 */
export class JobQueueErrorLinesMysql1769500000001 extends JobQueueMigration {
  readonly version = 26;
  readonly name = 'JobQueueErrorLines1769500000001';
  protected readonly upSql = [`ALTER TABLE job_logs ADD COLUMN level VARCHAR(8) NOT NULL DEFAULT 'info'`];
  protected readonly downSql = [`ALTER TABLE job_logs DROP COLUMN level`];
}

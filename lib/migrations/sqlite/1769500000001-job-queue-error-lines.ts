import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_logs.level`: `info` for the lines of `ctx.log()`, `error` for the line the finalize writes
 * when an attempt fails (its error): a job's log is also the history of its errors. Appended
 * after `message` without a rebuild: nothing reads `level` without reading `message` too, so the
 * walk over a long message's overflow pages is paid anyway.
 */
export class JobQueueErrorLinesSqlite1769500000001 extends JobQueueMigration {
  readonly version = 23;
  readonly name = 'JobQueueErrorLines1769500000001';
  protected readonly upSql = [`ALTER TABLE job_logs ADD COLUMN level TEXT NOT NULL DEFAULT 'info'`];
  protected readonly downSql = [`ALTER TABLE job_logs DROP COLUMN level`];
}

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
  protected readonly upSql = [
    `ALTER TABLE job_logs ADD COLUMN level TEXT NOT NULL DEFAULT 'info'`,
    // getLogs(id, { level: 'error' }) without reading the job's other lines; partial, so the lines
    // of ctx.log() cost nothing more to insert.
    `CREATE INDEX job_logs_errors_idx ON job_logs (job_id, id) WHERE level = 'error'`,
  ];
  protected readonly downSql = [`DROP INDEX job_logs_errors_idx`, `ALTER TABLE job_logs DROP COLUMN level`];
}

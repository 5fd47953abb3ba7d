import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_logs` (see the PostgreSQL migration of the same name). No foreign key here either, so that
 * every dialect removes a job's lines the same way (a SQLite connection may run without them).
 */
export class JobQueueLogsSqlite1769300000001 extends JobQueueMigration {
  readonly version = 21;
  readonly name = 'JobQueueLogs1769300000001';
  protected readonly upSql = [
    `CREATE TABLE job_logs (
      id INTEGER PRIMARY KEY,
      job_id INTEGER NOT NULL,
      attempt INTEGER NOT NULL,
      logged_at TEXT NOT NULL,
      message TEXT NOT NULL
    )`,
    `CREATE INDEX job_logs_job_idx ON job_logs (job_id, id)`,
  ];
  protected readonly downSql = [`DROP TABLE job_logs`];
}

import { JobQueueMigration } from '../job-queue-migration';

/** `job_queue_versions` (see the PostgreSQL migration of the same name). */
export class JobQueueVersionsSqlite1768600000001 extends JobQueueMigration {
  readonly version = 15;
  readonly name = 'JobQueueVersions1768600000001';
  protected readonly upSql = [
    `CREATE TABLE job_queue_versions (name TEXT NOT NULL PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`,
    `INSERT INTO job_queue_versions (name, version) VALUES ('paused', 0)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_versions`];
}

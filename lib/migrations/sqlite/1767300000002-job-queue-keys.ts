import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueKeysSqlite1767300000002 extends JobQueueMigration {
  readonly version = 12;
  readonly name = 'JobQueueKeys1767300000002';
  protected readonly upSql = [
    // See the PostgreSQL migration of the same version.
    `CREATE TABLE job_queue_keys (job_key TEXT NOT NULL PRIMARY KEY, window_ends_ms INTEGER)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_keys`];
}

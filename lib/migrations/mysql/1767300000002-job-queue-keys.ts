import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueKeysMysql1767300000002 extends JobQueueMigration {
  readonly version = 11;
  readonly name = 'JobQueueKeys1767300000002';
  protected readonly upSql = [
    // See the PostgreSQL migration of the same version.
    `CREATE TABLE job_queue_keys (job_key VARCHAR(255) NOT NULL PRIMARY KEY, window_ends_ms BIGINT NULL)
      ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_keys`];
}

import { JobQueueMigration } from '../job-queue-migration';

/** `job_queue_versions` (see the PostgreSQL migration of the same name). */
export class JobQueueVersionsMysql1768600000001 extends JobQueueMigration {
  readonly version = 20;
  readonly name = 'JobQueueVersions1768600000001';
  protected readonly upSql = [
    `CREATE TABLE job_queue_versions (name VARCHAR(64) NOT NULL PRIMARY KEY, version BIGINT NOT NULL DEFAULT 0)
      ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    `INSERT INTO job_queue_versions (name, version) VALUES ('paused', 0)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_versions`];
}

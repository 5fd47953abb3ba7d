import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueRateLimitsMysql1767300000001 extends JobQueueMigration {
  readonly version = 10;
  readonly name = 'JobQueueRateLimits1767300000001';
  protected readonly upSql = [
    // See the PostgreSQL migration of the same version.
    `CREATE TABLE job_queue_rate_limits (name VARCHAR(255) NOT NULL PRIMARY KEY, head BIGINT NOT NULL, counts TEXT NOT NULL)
      ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_rate_limits`];
}

import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueRateLimitsPostgres1767300000001 extends JobQueueMigration {
  readonly version = 16;
  readonly name = 'JobQueueRateLimits1767300000001';
  protected readonly upSql = [
    // One row per configured rate limit: claims per time bucket (comma-separated, oldest first,
    // the last one being bucket `head`). A claim of a limited type or group locks its row.
    `CREATE TABLE job_queue_rate_limits (name varchar(255) PRIMARY KEY, head bigint NOT NULL, counts text NOT NULL)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_rate_limits`];
}

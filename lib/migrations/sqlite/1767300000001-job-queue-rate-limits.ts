import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueRateLimitsSqlite1767300000001 extends JobQueueMigration {
  readonly version = 11;
  readonly name = 'JobQueueRateLimits1767300000001';
  protected readonly upSql = [
    // See the PostgreSQL migration of the same version.
    `CREATE TABLE job_queue_rate_limits (name TEXT NOT NULL PRIMARY KEY, head INTEGER NOT NULL, counts TEXT NOT NULL)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_rate_limits`];
}

import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueRateLimitsSqlite1767000000001 extends JobQueueMigration {
  readonly version = 9;
  readonly name = 'JobQueueRateLimits1767000000001';
  protected readonly upSql = [
    // See the PostgreSQL migration of the same version.
    `CREATE TABLE job_queue_rate_limits (name TEXT NOT NULL PRIMARY KEY, head INTEGER NOT NULL, counts TEXT NOT NULL)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_rate_limits`];
}

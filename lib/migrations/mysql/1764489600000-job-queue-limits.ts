import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueLimitsMysql1764489600000 extends JobQueueMigration {
  readonly version = 2;
  readonly name = 'JobQueueLimits1764489600000';
  protected readonly upSql = [
    `CREATE TABLE job_queue_locks (name VARCHAR(255) NOT NULL PRIMARY KEY) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    `CREATE INDEX jobs_finished_idx ON jobs (finished_at)`,
  ];
  protected readonly downSql = [`DROP INDEX jobs_finished_idx ON jobs`, `DROP TABLE job_queue_locks`];
}

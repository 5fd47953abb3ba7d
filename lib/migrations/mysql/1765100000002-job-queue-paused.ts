import { JobQueueMigration } from '../job-queue-migration';

export class JobQueuePausedMysql1765100000002 extends JobQueueMigration {
  readonly version = 6;
  readonly name = 'JobQueuePaused1765100000002';
  protected readonly upSql = [
    // pause({ type }) / pause({ group }): one row each, read by every worker every poll interval.
    `CREATE TABLE job_queue_paused (kind VARCHAR(8) NOT NULL, name VARCHAR(200) NOT NULL, paused_at DATETIME(3) NOT NULL,
      PRIMARY KEY (kind, name), CONSTRAINT job_queue_paused_kind_check CHECK (kind IN ('type', 'group'))
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_paused`];
}

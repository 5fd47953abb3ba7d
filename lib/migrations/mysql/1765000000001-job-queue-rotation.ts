import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueRotationMysql1765000000001 extends JobQueueMigration {
  readonly version = 4;
  readonly name = 'JobQueueRotation1765000000001';
  protected readonly upSql = [
    // The fair-share rotation cursor shared by every worker process (see the PostgreSQL migration).
    // Binary collation like jobs.group_key, so the cursor compares as the group index sorts.
    `CREATE TABLE job_queue_rotation (
      name VARCHAR(64) NOT NULL PRIMARY KEY,
      group_key VARCHAR(200) NOT NULL DEFAULT '',
      served INT NOT NULL DEFAULT 0
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    `INSERT INTO job_queue_rotation (name) VALUES ('fair-share')`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_rotation`];
}

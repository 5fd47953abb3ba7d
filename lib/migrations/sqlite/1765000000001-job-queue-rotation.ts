import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueRotationSqlite1765000000001 extends JobQueueMigration {
  readonly version = 5;
  readonly name = 'JobQueueRotation1765000000001';
  protected readonly upSql = [
    // The fair-share rotation cursor shared by every worker process (see the PostgreSQL migration).
    `CREATE TABLE job_queue_rotation (
      name TEXT PRIMARY KEY,
      group_key TEXT NOT NULL DEFAULT '',
      served INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID`,
    `INSERT INTO job_queue_rotation (name) VALUES ('fair-share')`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_rotation`];
}

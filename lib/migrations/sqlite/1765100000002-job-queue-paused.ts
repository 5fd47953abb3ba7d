import { JobQueueMigration } from '../job-queue-migration';

export class JobQueuePausedSqlite1765100000002 extends JobQueueMigration {
  readonly version = 7;
  readonly name = 'JobQueuePaused1765100000002';
  protected readonly upSql = [
    // pause({ type }) / pause({ group }): one row each, read by every worker every poll interval.
    `CREATE TABLE job_queue_paused (kind TEXT NOT NULL CHECK (kind IN ('type', 'group')), name TEXT NOT NULL,
      paused_at TEXT NOT NULL, PRIMARY KEY (kind, name)) WITHOUT ROWID`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_paused`];
}

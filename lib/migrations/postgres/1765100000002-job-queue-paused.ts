import { JobQueueMigration } from '../job-queue-migration';

export class JobQueuePausedPostgres1765100000002 extends JobQueueMigration {
  readonly version = 10;
  readonly name = 'JobQueuePaused1765100000002';
  protected readonly upSql = [
    // pause({ type }) / pause({ group }): one row each, read by every worker every poll interval.
    `CREATE TABLE job_queue_paused (kind varchar(8) NOT NULL, name varchar(200) NOT NULL,
      paused_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (kind, name),
      CONSTRAINT job_queue_paused_kind_check CHECK (kind IN ('type', 'group')))`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_paused`];
}

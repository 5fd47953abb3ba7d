import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueLimitsPostgres1764489600000 extends JobQueueMigration {
  readonly version = 2;
  readonly name = 'JobQueueLimits1764489600000';
  protected readonly upSql = [
    // One row per configured limit; claims that touch a capped dimension lock its row, so
    // count-then-claim is serialized cluster-wide for that dimension only.
    `CREATE TABLE job_queue_locks (name varchar(255) PRIMARY KEY)`,
    `CREATE INDEX jobs_finished_idx ON jobs (finished_at) WHERE finished_at IS NOT NULL`,
  ];
  protected readonly downSql = [`DROP INDEX jobs_finished_idx`, `DROP TABLE job_queue_locks`];
}

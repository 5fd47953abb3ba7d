import { JobQueueMigration } from '../job-queue-migration';

export class JobQueuePartialKeyIndexSqlite1764662400000 extends JobQueueMigration {
  readonly version = 4;
  readonly name = 'JobQueuePartialKeyIndex1764662400000';
  protected readonly upSql = [
    // Most jobs have no key: the unique index need only hold the keyed ones.
    `DROP INDEX jobs_job_key_uq`,
    `CREATE UNIQUE INDEX jobs_job_key_uq ON jobs (job_key) WHERE job_key IS NOT NULL`,
  ];
  protected readonly downSql = [`DROP INDEX jobs_job_key_uq`, `CREATE UNIQUE INDEX jobs_job_key_uq ON jobs (job_key)`];
}

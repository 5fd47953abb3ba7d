import { JobQueueMigration } from '../job-queue-migration';

/**
 * The ready indexes by type: `jobs_ready_idx` (type, priority DESC, id) and `jobs_ready_group_idx`
 * (group_key, type, priority DESC, id), so that a claim reads each of its types from its own
 * stretch and never a row of a type it does not handle, and the walks of the groups step over
 * (group, type) pairs. The same names as before, for the INDEXED BY hints of processes still on
 * the previous version. See the PostgreSQL migration of the same name.
 */
export class JobQueueReadyByTypeSqlite1767700000001 extends JobQueueMigration {
  readonly version = 13;
  readonly name = 'JobQueueReadyByType1767700000001';
  protected readonly upSql = [
    `DROP INDEX jobs_ready_idx`,
    `CREATE INDEX jobs_ready_idx ON jobs (type, priority DESC, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_group_idx`,
    `CREATE INDEX jobs_ready_group_idx ON jobs (group_key, type, priority DESC, id) WHERE state = 'ready'`,
  ];
  protected readonly downSql = [
    `DROP INDEX jobs_ready_group_idx`,
    `CREATE INDEX jobs_ready_group_idx ON jobs (group_key, priority DESC, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_idx`,
    `CREATE INDEX jobs_ready_idx ON jobs (priority DESC, id) WHERE state = 'ready'`,
  ];
}

import { JobQueueMigration } from '../job-queue-migration';

/**
 * The ready index by type: (type, priority DESC, id) over ready rows, so that a claim reads each
 * of its types from its own stretch and never a row of a type it does not handle. Same name as
 * before, for the INDEXED BY hints of processes still on the previous version.
 * `jobs_ready_group_type_idx` serves the walk of the groups with claimable jobs by (group, type)
 * pairs. See the PostgreSQL migration of the same name.
 */
export class JobQueueReadyByTypeSqlite1767700000001 extends JobQueueMigration {
  readonly version = 13;
  readonly name = 'JobQueueReadyByType1767700000001';
  protected readonly upSql = [
    `DROP INDEX jobs_ready_idx`,
    `CREATE INDEX jobs_ready_idx ON jobs (type, priority DESC, id) WHERE state = 'ready'`,
    `CREATE INDEX jobs_ready_group_type_idx ON jobs (group_key, type, priority DESC, id) WHERE state = 'ready'`,
  ];
  protected readonly downSql = [
    `DROP INDEX jobs_ready_group_type_idx`,
    `DROP INDEX jobs_ready_idx`,
    `CREATE INDEX jobs_ready_idx ON jobs (priority DESC, id) WHERE state = 'ready'`,
  ];
}

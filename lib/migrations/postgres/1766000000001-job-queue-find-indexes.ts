import { JobQueueMigration } from '../job-queue-migration';

/**
 * find()'s indexes without leased and running rows. Every state change of a PostgreSQL row
 * writes a new entry into every index of the table (state is indexed, so no HOT update); the
 * full indexes of migration 9 added four entries to each claim and each finalize and cost the
 * claim path about a quarter of its throughput. Left out of them, in-flight rows get entries at
 * enqueue and at finalize only; find() reads in-flight rows through `jobs_in_flight_idx`
 * (lib/query/find-jobs.sql.ts). The predicate is the text find() writes out.
 *
 * On a large table, build the new indexes beforehand without blocking writes, e.g.
 *   CREATE INDEX CONCURRENTLY jobs_find_state_idx ON jobs (state, id) WHERE state NOT IN ('leased', 'running');
 * (IF NOT EXISTS then skips them here.)
 */
const NOT_IN_FLIGHT = `WHERE state NOT IN ('leased', 'running')`;

export class JobQueueFindIndexesPostgres1766000000001 extends JobQueueMigration {
  readonly version = 12;
  readonly name = 'JobQueueFindIndexes1766000000001';
  protected readonly upSql = [
    `CREATE INDEX IF NOT EXISTS jobs_find_state_idx ON jobs (state, id) ${NOT_IN_FLIGHT}`,
    `CREATE INDEX IF NOT EXISTS jobs_find_type_idx ON jobs (type, id) ${NOT_IN_FLIGHT}`,
    `CREATE INDEX IF NOT EXISTS jobs_find_group_idx ON jobs (group_key, id) ${NOT_IN_FLIGHT}`,
    `CREATE INDEX IF NOT EXISTS jobs_find_args_idx ON jobs USING gin ((args::jsonb) jsonb_path_ops) ${NOT_IN_FLIGHT}`,
    `DROP INDEX IF EXISTS jobs_args_gin_idx`,
    `DROP INDEX IF EXISTS jobs_group_id_idx`,
    `DROP INDEX IF EXISTS jobs_type_id_idx`,
    `DROP INDEX IF EXISTS jobs_state_id_idx`,
  ];
  protected readonly downSql = [
    `CREATE INDEX IF NOT EXISTS jobs_state_id_idx ON jobs (state, id)`,
    `CREATE INDEX IF NOT EXISTS jobs_type_id_idx ON jobs (type, id)`,
    `CREATE INDEX IF NOT EXISTS jobs_group_id_idx ON jobs (group_key, id)`,
    `CREATE INDEX IF NOT EXISTS jobs_args_gin_idx ON jobs USING gin ((args::jsonb) jsonb_path_ops)`,
    `DROP INDEX IF EXISTS jobs_find_args_idx`,
    `DROP INDEX IF EXISTS jobs_find_group_idx`,
    `DROP INDEX IF EXISTS jobs_find_type_idx`,
    `DROP INDEX IF EXISTS jobs_find_state_idx`,
  ];
}

import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueQueryIndexesPostgres1765100000001 extends JobQueueMigration {
  readonly version = 9;
  readonly name = 'JobQueueQueryIndexes1765100000001';
  protected readonly upSql = [
    // find(): newest first within a state, a type or a group, read in index order and stopped
    // at the page size (keyset on id, no OFFSET).
    `CREATE INDEX IF NOT EXISTS jobs_state_id_idx ON jobs (state, id)`,
    `CREATE INDEX IF NOT EXISTS jobs_type_id_idx ON jobs (type, id)`,
    `CREATE INDEX IF NOT EXISTS jobs_group_id_idx ON jobs (group_key, id)`,
    // argsContains (`(args::jsonb) @> …`): an expression index over the existing text column,
    // so an existing table upgrades in place (no rewrite, no change to how args are stored).
    // jsonb_path_ops: smaller and faster than the default opclass, and @> is all it must serve.
    // On a large table, build it beforehand without blocking writes:
    //   CREATE INDEX CONCURRENTLY jobs_args_gin_idx ON jobs USING gin ((args::jsonb) jsonb_path_ops);
    // (IF NOT EXISTS then skips it here; likewise for the three above.)
    `CREATE INDEX IF NOT EXISTS jobs_args_gin_idx ON jobs USING gin ((args::jsonb) jsonb_path_ops)`,
  ];
  protected readonly downSql = [
    `DROP INDEX IF EXISTS jobs_args_gin_idx`,
    `DROP INDEX IF EXISTS jobs_group_id_idx`,
    `DROP INDEX IF EXISTS jobs_type_id_idx`,
    `DROP INDEX IF EXISTS jobs_state_id_idx`,
  ];
}

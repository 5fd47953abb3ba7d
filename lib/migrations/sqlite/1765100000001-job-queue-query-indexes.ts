import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueQueryIndexesSqlite1765100000001 extends JobQueueMigration {
  readonly version = 6;
  readonly name = 'JobQueueQueryIndexes1765100000001';
  protected readonly upSql = [
    // find(): newest first within a state, a type or a group (keyset on id). argsContains uses
    // json_extract/json_each on a bounded window of rows (see lib/query/find-jobs.sql.ts).
    `CREATE INDEX IF NOT EXISTS jobs_state_id_idx ON jobs (state, id)`,
    `CREATE INDEX IF NOT EXISTS jobs_type_id_idx ON jobs (type, id)`,
    `CREATE INDEX IF NOT EXISTS jobs_group_id_idx ON jobs (group_key, id)`,
  ];
  protected readonly downSql = [`DROP INDEX jobs_group_id_idx`, `DROP INDEX jobs_type_id_idx`, `DROP INDEX jobs_state_id_idx`];
}

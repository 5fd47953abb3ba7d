import { JobQueueMigration } from '../job-queue-migration';

/** The ready rows in (type, group) order, for the walk of ready groups (see the PostgreSQL migration of the same name). */
export class JobQueueReadyTypeGroupIndexSqlite1770000000001 extends JobQueueMigration {
  readonly version = 27;
  readonly name = 'JobQueueReadyTypeGroupIndex1770000000001';
  protected readonly upSql = [`CREATE INDEX IF NOT EXISTS jobs_ready_type_group_idx ON jobs (type, group_key) WHERE state = 'ready'`];
  protected readonly downSql = [`DROP INDEX IF EXISTS jobs_ready_type_group_idx`];
}

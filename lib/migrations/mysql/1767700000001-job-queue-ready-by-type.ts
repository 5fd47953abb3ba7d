import { JobQueueMigration } from '../job-queue-migration';

/**
 * The ready index by type: (state, type, neg_priority, id), so that a claim reads each of its
 * types from its own stretch (one UNION arm per type, lib/claim/ready-by-type.sql.ts) and never a
 * row of a type it does not handle. Same name as before, for the FORCE INDEX hints of processes
 * still on the previous version during a rolling upgrade. See the PostgreSQL migration of the
 * same name.
 */
export class JobQueueReadyByTypeMysql1767700000001 extends JobQueueMigration {
  readonly version = 14;
  readonly name = 'JobQueueReadyByType1767700000001';
  protected readonly upSql = [`ALTER TABLE jobs DROP KEY jobs_ready_idx, ADD KEY jobs_ready_idx (state, type, neg_priority, id)`];
  protected readonly downSql = [`ALTER TABLE jobs DROP KEY jobs_ready_idx, ADD KEY jobs_ready_idx (state, neg_priority, id)`];
}

import { JobQueueMigration } from '../job-queue-migration';

/**
 * The ready indexes end with `run_after`: (type, priority DESC, id, run_after) and (group_key,
 * type, priority DESC, id, run_after). A claim reads its type's stretch in claim order and keeps
 * the rows whose time has come; with `run_after` in the index that test is made on the index
 * entry, where before it fetched each row from the heap. Jobs due later (scheduled ahead, retries
 * backing off) of the worker's own type sat in that stretch: with 100,000 of them due tomorrow,
 * due jobs of the type ran at 594 jobs/s against 5,585 without them, and at 2,003 with this index
 * (bench/HISTORY.md, scan-cost case e). The entries are still stepped over one by one; reading
 * due rows first would change the claim order (to priority, due time, id), which every claim path
 * assumes.
 *
 * The same names, for the hints of processes still on the previous version. On a large table,
 * build the new indexes first without blocking writes; this migration then only swaps names:
 *   CREATE INDEX CONCURRENTLY jobs_ready_due_idx ON jobs (type, priority DESC, id, run_after) WHERE state = 'ready';
 *   CREATE INDEX CONCURRENTLY jobs_ready_group_due_idx ON jobs (group_key, type, priority DESC, id, run_after) WHERE state = 'ready';
 */
export class JobQueueReadyDueFilterPostgres1768500000001 extends JobQueueMigration {
  readonly version = 30;
  readonly name = 'JobQueueReadyDueFilter1768500000001';
  protected readonly upSql = [
    `CREATE INDEX IF NOT EXISTS jobs_ready_due_idx ON jobs (type, priority DESC, id, run_after) WHERE state = 'ready'`,
    `CREATE INDEX IF NOT EXISTS jobs_ready_group_due_idx ON jobs (group_key, type, priority DESC, id, run_after) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_group_idx`,
    `ALTER INDEX jobs_ready_group_due_idx RENAME TO jobs_ready_group_idx`,
    `DROP INDEX jobs_ready_idx`,
    `ALTER INDEX jobs_ready_due_idx RENAME TO jobs_ready_idx`,
  ];
  protected readonly downSql = [
    `CREATE INDEX jobs_ready_type_idx ON jobs (type, priority DESC, id) WHERE state = 'ready'`,
    `CREATE INDEX jobs_ready_group_type_idx ON jobs (group_key, type, priority DESC, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_group_idx`,
    `ALTER INDEX jobs_ready_group_type_idx RENAME TO jobs_ready_group_idx`,
    `DROP INDEX jobs_ready_idx`,
    `ALTER INDEX jobs_ready_type_idx RENAME TO jobs_ready_idx`,
  ];
}

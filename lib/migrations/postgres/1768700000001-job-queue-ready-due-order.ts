import { swapEvery } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { CLAIM_SQL_V23 } from './1767900000001-job-queue-claim-union-all';
import { READY_GROUPS_SQL_V28 } from './1768300000001-job-queue-ready-groups-paused';

const every = (text: string, from: string, to: string, times: number): string => swapEvery(32, text, from, to, times);

/** The claim reads and merges its types' rows in (priority, due time, id) order. */
export const CLAIM_SQL_V32 = every(
  every(every(CLAIM_SQL_V23, 'SELECT id, priority FROM jobs', 'SELECT id, priority, run_after FROM jobs', 2), 'type, priority DESC, id\n', 'type, priority DESC, run_after, id\n', 2),
  'ORDER BY p.priority DESC, p.id',
  'ORDER BY p.priority DESC, p.run_after, p.id',
  2,
);

/** The walk of ready groups probes each pair's first job in the same order. */
export const READY_GROUPS_SQL_V32 = every(READY_GROUPS_SQL_V28, 'j.priority DESC, j.id LIMIT 1', 'j.priority DESC, j.run_after, j.id LIMIT 1', 7);

/**
 * Claim order becomes priority, then due time (`run_after`), then id, and the ready indexes
 * (type, priority DESC, run_after, id) and (group_key, type, priority DESC, run_after, id) follow
 * it. Jobs due later (scheduled ahead, retries backing off) now sit after the due jobs of their
 * priority instead of among them in id order, so a claim reads the due rows first and stops at
 * its limit. Before, it stepped over every earlier-enqueued delayed entry of its type on each
 * claim: with 100,000 jobs of the worker's own type due tomorrow, a claim of 10 took 8.4 ms
 * (bench scan-cost, case e). A claim that finds fewer due rows than it asks for still passes the
 * delayed entries of its priorities once, as graphile-worker's claim (priority, run_at) does.
 *
 * Order among due jobs barely moves: a job's `run_after` is its enqueue time unless it was
 * scheduled or retried, so jobs enqueued together keep their id order; a retry that backed off
 * now queues behind jobs that became due before it did.
 *
 * The same names, for the hints of processes still on the previous version. On a large table,
 * build the new indexes first without blocking writes; this migration then only swaps names:
 *   CREATE INDEX CONCURRENTLY jobs_ready_order_idx ON jobs (type, priority DESC, run_after, id) WHERE state = 'ready';
 *   CREATE INDEX CONCURRENTLY jobs_ready_group_order_idx ON jobs (group_key, type, priority DESC, run_after, id) WHERE state = 'ready';
 */
export class JobQueueReadyDueOrderPostgres1768700000001 extends JobQueueMigration {
  readonly version = 32;
  readonly name = 'JobQueueReadyDueOrder1768700000001';
  protected readonly upSql = [
    `CREATE INDEX IF NOT EXISTS jobs_ready_order_idx ON jobs (type, priority DESC, run_after, id) WHERE state = 'ready'`,
    `CREATE INDEX IF NOT EXISTS jobs_ready_group_order_idx ON jobs (group_key, type, priority DESC, run_after, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_group_idx`,
    `ALTER INDEX jobs_ready_group_order_idx RENAME TO jobs_ready_group_idx`,
    `DROP INDEX jobs_ready_idx`,
    `ALTER INDEX jobs_ready_order_idx RENAME TO jobs_ready_idx`,
    CLAIM_SQL_V32,
    READY_GROUPS_SQL_V32,
  ];
  protected readonly downSql = [
    READY_GROUPS_SQL_V28,
    CLAIM_SQL_V23,
    `CREATE INDEX jobs_ready_due_idx ON jobs (type, priority DESC, id, run_after) WHERE state = 'ready'`,
    `CREATE INDEX jobs_ready_group_due_idx ON jobs (group_key, type, priority DESC, id, run_after) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_group_idx`,
    `ALTER INDEX jobs_ready_group_due_idx RENAME TO jobs_ready_group_idx`,
    `DROP INDEX jobs_ready_idx`,
    `ALTER INDEX jobs_ready_due_idx RENAME TO jobs_ready_idx`,
  ];
}

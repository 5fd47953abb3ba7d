import { swapEvery } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { CLAIM_SQL_V23 } from './1767900000001-job-queue-claim-union-all';
import { READY_GROUPS_SQL_V28 } from './1768300000001-job-queue-ready-groups-paused';

const every = (text: string, from: string, to: string, times: number): string => swapEvery(32, text, from, to, times);

/**
 * A type's due rows (of a group's quota, with `group`) in claim order, read priority by priority:
 * the priorities present among the ready rows by a skip scan of the ready index (one probe each,
 * run only while rows are still wanted), and within each the due rows, an index range that ends
 * at the first job due later. Read in one pass over (priority, run_after, id), a claim that found
 * fewer due rows than its limit (an idle poll, a trickle of work) read every later entry of the
 * type: 3.6 ms per claim beside 100,000 jobs due tomorrow.
 */
function dueByPriority(group: boolean, limit: string): string {
  const key = group ? 'j.group_key = q.group_key AND ' : '';
  const order = group ? 'j.group_key, j.type, j.priority DESC' : 'j.type, j.priority DESC';
  const level = (below: string) =>
    `SELECT j.priority FROM jobs j WHERE j.state = 'ready' AND ${key}j.type = t.type${below} ORDER BY ${order} LIMIT 1`;
  return `WITH RECURSIVE lv (priority) AS (
            (${level('')})
            UNION ALL
            SELECT (${level(' AND j.priority < lv.priority')}) FROM lv WHERE lv.priority IS NOT NULL
          )
          SELECT x.id, x.priority, x.run_after FROM lv
          CROSS JOIN LATERAL (
            SELECT j.id, j.priority, j.run_after FROM jobs j
            WHERE j.state = 'ready' AND ${key}j.type = t.type AND j.priority = lv.priority AND j.run_after <= now()
            ORDER BY ${order}, j.run_after, j.id
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          ) x
          LIMIT ${limit}`;
}

/** The claim reads each type's rows by dueByPriority and merges them in (priority, due time, id) order. */
export const CLAIM_SQL_V32 = every(
  every(
    every(
      CLAIM_SQL_V23,
      `SELECT id, priority FROM jobs
            WHERE state = 'ready' AND group_key = q.group_key AND type = t.type AND run_after <= now()
            ORDER BY group_key, type, priority DESC, id
            LIMIT q.lim
            FOR UPDATE SKIP LOCKED`,
      dueByPriority(true, 'q.lim'),
      1,
    ),
    `SELECT id, priority FROM jobs
          WHERE state = 'ready' AND type = t.type AND run_after <= now()
          ORDER BY type, priority DESC, id
          LIMIT $5
          FOR UPDATE SKIP LOCKED`,
    dueByPriority(false, '$5'),
    1,
  ),
  'ORDER BY p.priority DESC, p.id',
  'ORDER BY p.priority DESC, p.run_after, p.id',
  2,
);

/**
 * The walk of ready groups probes each pair's first job in the same order, and a pair whose first
 * job is not due yet by dueByPriority's steps: priority by priority, each a range that ends at the
 * first job due later (one probe read every later entry of the pair).
 */
export const READY_GROUPS_SQL_V32 = every(
  every(
    every(READY_GROUPS_SQL_V28, 'j.priority DESC, j.id LIMIT 1', 'j.priority DESC, j.run_after, j.id LIMIT 1', 7),
    `          SELECT j.weight INTO v_w FROM jobs j
            WHERE j.state = 'ready' AND j.group_key = v_g AND j.type = v_t AND j.run_after <= now()
            ORDER BY j.group_key, j.type, j.priority DESC, j.run_after, j.id LIMIT 1;
`,
    `          SELECT j.priority INTO v_p FROM jobs j WHERE j.state = 'ready' AND j.group_key = v_g AND j.type = v_t
            ORDER BY j.group_key, j.type, j.priority DESC LIMIT 1;
          WHILE v_p IS NOT NULL AND v_w IS NULL LOOP
            SELECT j.weight INTO v_w FROM jobs j
              WHERE j.state = 'ready' AND j.group_key = v_g AND j.type = v_t AND j.priority = v_p AND j.run_after <= now()
              ORDER BY j.group_key, j.type, j.priority DESC, j.run_after, j.id LIMIT 1;
            IF v_w IS NULL THEN
              SELECT j.priority INTO v_p FROM jobs j WHERE j.state = 'ready' AND j.group_key = v_g AND j.type = v_t AND j.priority < v_p
                ORDER BY j.group_key, j.type, j.priority DESC LIMIT 1;
            END IF;
          END LOOP;
`,
    1,
  ),
  `      v_due boolean;
`,
  `      v_due boolean;
      v_p int;
`,
  1,
);

/**
 * Claim order becomes priority, then due time (`run_after`), then id, and the ready indexes
 * (type, priority DESC, run_after, id) and (group_key, type, priority DESC, run_after, id) follow
 * it. Jobs due later (scheduled ahead, retries backing off) now sit after the due jobs of their
 * priority instead of among them in id order, so a claim reads the due rows first and stops at
 * its limit. Before, it stepped over every earlier-enqueued delayed entry of its type on each
 * claim: with 100,000 jobs of the worker's own type due tomorrow, a claim of 10 took 4.9 ms
 * (bench scan-cost, case e; 0.47 ms now). Each priority's due rows are read as an index range
 * that ends at the first job due later (dueByPriority), so a claim that finds fewer due rows than
 * it asks for does not pass the later ones either, where one pass in (priority, run_after, id)
 * order, as graphile-worker's claim reads, did: 3.6 ms per idle claim beside those 100,000.
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

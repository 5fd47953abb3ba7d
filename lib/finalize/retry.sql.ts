import { inChunks, skewedListChunk } from '../database/in-chunks';
import { chunked, sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { cascade } from './cascade.sql';
import { notYetCountedDown } from './promotion-slices.sql';
import { idsByCount } from './ids-by-count';
import { planRetry } from './retry-plan';
import { toSettled, type CascadeResult } from './settled-job';

export interface RetryOutcome extends CascadeResult {
  found: boolean;
  /** The job's state before the retry (only failed and cancelled jobs are retried). */
  previousState: string | null;
  /** Every job reopened: the job, dependents cancelled because of it, containers that rolled up failed. */
  reopened: number[];
}

export interface RetryManyOutcome extends CascadeResult {
  /** The given jobs that were failed or cancelled when locked: the ones this call retried. */
  retried: number[];
  /** Every job reopened, the retried ones and what their failures had closed. */
  reopened: number[];
}

const TERMINAL_BAD = `'failed', 'cancelled'`;

/**
 * Re-opens a failed or cancelled job together with what its failure closed: dependents that
 * were cancelled (transitively), and containers that rolled up `failed` or `cancelled` because
 * of it (and, for a container, its own failed or cancelled descendants). Their counters are
 * then recomputed from the graph under row locks, jobs with nothing left to wait for become
 * `ready`, and any that still depend on another failed job are cancelled again.
 */
export async function retryJob(tx: SqlExecutor, id: number): Promise<RetryOutcome> {
  const lock = tx.dialect.name === 'sqlite' ? sql`` : sql` FOR UPDATE`;
  const { rows: roots } = await tx.run(sql`SELECT id, state FROM jobs WHERE id = ${id}${lock}`);
  if (!roots.length) return { found: false, previousState: null, reopened: [], settled: [], promoted: 0 };
  const previousState = String(roots[0].state);
  const { reopened, settled, promoted } = await retryJobs(tx, [id]);
  return { found: true, previousState, reopened, settled, promoted };
}

/**
 * `retryJob` for many jobs in one pass: the union of their closures is reopened and recounted
 * once, so a bulk re-drive costs a handful of statements per batch instead of per job. Jobs
 * that are not failed or cancelled (any more) are left alone.
 */
export async function retryJobs(tx: SqlExecutor, given: readonly number[]): Promise<RetryManyOutcome> {
  const d = tx.dialect;
  const lock = d.name === 'sqlite' ? sql`` : sql` FOR UPDATE`;
  const roots = await inChunks(tx, [...new Set(given)].sort((a, b) => a - b), (list) =>
    sql`SELECT id, is_container FROM jobs WHERE id IN (${list}) AND state IN (${sql.raw(TERMINAL_BAD)}) ORDER BY id${lock}`);
  if (!roots.length) return { retried: [], reopened: [], settled: [], promoted: 0 };
  const retried = roots.map((r) => Number(r.id));

  // 1. The closure of what to reopen.
  const reopen = new Set<number>(retried);
  const boxes = roots.filter((r) => Number(r.is_container) === 1).map((r) => Number(r.id));
  if (boxes.length) {
    const rows = await inChunks(tx, boxes, (list) => sql`WITH RECURSIVE sub (id, state) AS (
        SELECT id, state FROM jobs WHERE parent_id IN (${list})
        UNION ALL SELECT j.id, j.state FROM jobs j JOIN sub ON j.parent_id = sub.id)
      SELECT id FROM sub WHERE state IN (${sql.raw(TERMINAL_BAD)})`, skewedListChunk(d));
    rows.forEach((r) => reopen.add(Number(r.id)));
  }
  let frontier = [...reopen];
  // Per reopened job, how many of its upstream edges come from reopened jobs (see planRetry).
  const reopenedUpstreams = new Map<number, number>();
  // SQLite has no statistics for find()'s (state, id) index and would walk every cancelled job
  // once per slice (quadratic: 40,000 dependents took minutes); NOT INDEXED leaves only the
  // primary key for j and p, so each slice starts from its own ids.
  const byIdOnly = d.name === 'sqlite' ? sql.raw(' NOT INDEXED') : sql``;
  while (frontier.length) {
    const found: number[] = [];
    for (const chunk of chunked(frontier, skewedListChunk(d))) {
      const list = sql.list(chunk);
      // Each edge from the frontier once (no frontier job is walked twice); a parent has no edge.
      // An edge that allows failure leads nowhere: its dependent was not cancelled by this job.
      const { rows } = await tx.run(sql`
        SELECT dep.depends_on_id AS up, j.id FROM job_deps dep JOIN jobs j${byIdOnly} ON j.id = dep.job_id
          WHERE dep.depends_on_id IN (${list}) AND dep.allow_failure = 0 AND j.state = 'cancelled'
        UNION
        SELECT NULL AS up, p.id FROM jobs c JOIN jobs p${byIdOnly} ON p.id = c.parent_id
          WHERE c.id IN (${list}) AND p.state IN (${sql.raw(TERMINAL_BAD)})`);
      for (const r of rows) {
        const x = Number(r.id);
        if (r.up != null) reopenedUpstreams.set(x, (reopenedUpstreams.get(x) ?? 0) + 1);
        if (!reopen.has(x)) {
          reopen.add(x);
          found.push(x);
        }
      }
    }
    frontier = found;
  }
  const ids = [...reopen].sort((a, b) => a - b);

  // 2. Lock them, and the open containers whose child counts change, in id order. Every list
  // below is sent in bounded slices: a retry may reopen any number of jobs.
  const parentRows = await inChunks(tx, ids, (list) => sql`SELECT DISTINCT parent_id FROM jobs WHERE id IN (${list}) AND parent_id IS NOT NULL`);
  const containers = [...new Set([...parentRows.map((r) => Number(r.parent_id)), ...ids])].sort((a, b) => a - b);
  const locked = await inChunks(tx, containers, (list) => sql`SELECT id, state, is_container FROM jobs WHERE id IN (${list}) ORDER BY id${lock}`);
  const boxesLocked = new Set(locked.filter((r) => Number(r.is_container) === 1).map((r) => Number(r.id)));
  // The walk read without locks. If a concurrent retry reopened part of the closure meanwhile,
  // the walk's edges no longer prove anything: every job is read again after the reset.
  const closure = new Set(ids);
  const walkHolds = locked.every((r) => !closure.has(Number(r.id)) || r.state === 'failed' || r.state === 'cancelled');

  // 3. Count each job's open upstreams, then reset every job once, to its final state: its
  // pending count set, ready if nothing is left to wait for (planRetry says why one read made
  // before the reset is enough).
  const now = d.now();
  // An edge that allows failure is open while its upstream runs, or when this retry reopens it; a
  // failed or cancelled upstream left as it is counts as finished, and never as bad.
  const counts = await inChunks(tx, ids, (list) => sql`SELECT dep.job_id,
      SUM(CASE WHEN dep.allow_failure = 0 OR u.state NOT IN (${sql.raw(TERMINAL_BAD)}) THEN 1 ELSE 0 END) AS n,
      SUM(CASE WHEN dep.allow_failure = 0 AND u.state IN (${sql.raw(TERMINAL_BAD)}) THEN 1 ELSE 0 END) AS bad,
      SUM(CASE WHEN dep.allow_failure = 1 AND u.state IN (${sql.raw(TERMINAL_BAD)}) THEN 1 ELSE 0 END) AS finished_lenient
    FROM job_deps dep JOIN jobs u ON u.id = dep.depends_on_id
    WHERE dep.job_id IN (${list}) AND (u.state <> 'done' OR ${notYetCountedDown()}) GROUP BY dep.job_id`);
  const reopenedLenient = await lenientEdgesWithin(tx, counts.filter((r) => Number(r.finished_lenient) > 0).map((r) => Number(r.job_id)), closure);
  const plan = planRetry(
    ids,
    boxesLocked,
    counts.map((r) => ({ id: Number(r.job_id), open: Number(r.n) + (reopenedLenient.get(Number(r.job_id)) ?? 0), bad: Number(r.bad) })),
    walkHolds ? reopenedUpstreams : new Map(),
  );
  for (const [pending, { ready, waiting }] of plan.pending) {
    for (const [state, group] of [['ready', ready], ['waiting', waiting]] as const) {
      await inChunks(tx, group, (list) => sql`UPDATE jobs SET state = ${state}, attempts = 0, result = NULL, last_error = NULL, progress = 0,
          current_stage = NULL, started_at = NULL, finished_at = NULL, lease_owner = NULL, lease_expires = NULL,
          pending_deps = ${pending}, run_after = ${now}, updated_at = ${now}
        WHERE id IN (${list})`);
    }
  }
  const children = await inChunks(tx, containers, (list) => sql`SELECT parent_id,
      SUM(CASE WHEN state IN ('done', ${sql.raw(TERMINAL_BAD)}) THEN 0 ELSE 1 END) AS open,
      SUM(CASE WHEN state IN (${sql.raw(TERMINAL_BAD)}) THEN 1 ELSE 0 END) AS bad
    FROM jobs WHERE parent_id IN (${list}) GROUP BY parent_id`, skewedListChunk(d));
  await setCounts(tx, children, 'parent_id', 'pending_children', 'open');
  await setCounts(tx, children, 'parent_id', 'failed_children', 'bad');
  await reopenLenientEdges(tx, ids, closure);

  // 4. Cancel again what still depends on a failed job: the suspects' upstreams read again, now
  // that the reopened ones are waiting.
  const stillBad = await inChunks(tx, plan.suspects, (list) => sql`SELECT DISTINCT dep.job_id
    FROM job_deps dep JOIN jobs u ON u.id = dep.depends_on_id
    WHERE dep.job_id IN (${list}) AND dep.allow_failure = 0 AND u.state IN (${sql.raw(TERMINAL_BAD)})`);
  const blocked = stillBad.map((r) => Number(r.job_id)).sort((a, b) => a - b);
  const promoted = plan.ready;
  let result: CascadeResult = { settled: [], promoted };
  if (blocked.length) {
    const rows = await inChunks(tx, blocked, (list) => sql`SELECT id, parent_id FROM jobs WHERE id IN (${list})`);
    await inChunks(tx, blocked, (list) => sql`UPDATE jobs SET state = 'cancelled', last_error = 'cancelled: still depends on a failed or cancelled job',
      finished_at = ${now} WHERE id IN (${list})`);
    const again = await cascade(tx, rows.map((r) => toSettled(r, 'cancelled')));
    result = { settled: again.settled, promoted: again.promoted < 0 ? -1 : promoted + again.promoted };
  }
  return { retried, reopened: ids, ...result };
}

/** Per job of `jobIds`, how many of its upstreams in `closure` it waits for with allowFailure. */
async function lenientEdgesWithin(tx: SqlExecutor, jobIds: number[], closure: ReadonlySet<number>): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!jobIds.length) return out;
  const edges = await inChunks(tx, jobIds.sort((a, b) => a - b), (list) =>
    sql`SELECT job_id, depends_on_id FROM job_deps WHERE job_id IN (${list}) AND allow_failure = 1`);
  for (const e of edges) {
    if (!closure.has(Number(e.depends_on_id))) continue;
    const id = Number(e.job_id);
    out.set(id, (out.get(id) ?? 0) + 1);
  }
  return out;
}

/**
 * The dependents that wait for a reopened job with allowFailure and have not started yet wait for
 * it again: its failure had counted them down. One outside the closure (the closure's own were
 * recounted) that is waiting or ready gets its count back and waits; one that already ran, or
 * runs, keeps the outcome it saw.
 */
async function reopenLenientEdges(tx: SqlExecutor, reopened: readonly number[], closure: ReadonlySet<number>): Promise<void> {
  // PostgreSQL and SQLite: most databases hold no such edge, and their partial index says so in
  // one probe, where a read per slice of the closure took 100 statements for 100,000 jobs. The
  // closure is locked: an enqueue naming one of its jobs has committed, or waits for this one.
  if (tx.dialect.name !== 'mysql' && !(await tx.run(sql`SELECT 1 AS x FROM job_deps WHERE allow_failure = 1 LIMIT 1`)).rows.length) return;
  const edges = await inChunks(tx, reopened, (list) =>
    sql`SELECT job_id, COUNT(*) AS n FROM job_deps WHERE depends_on_id IN (${list}) AND allow_failure = 1 GROUP BY job_id`, skewedListChunk(tx.dialect));
  const counts = new Map<number, number>();
  for (const e of edges) {
    const id = Number(e.job_id);
    if (!closure.has(id)) counts.set(id, (counts.get(id) ?? 0) + Number(e.n));
  }
  const now = tx.dialect.now();
  for (const [n, list] of idsByCount(counts)) {
    await inChunks(tx, list, (chunk) => sql`UPDATE jobs SET state = 'waiting', pending_deps = pending_deps + ${n},
        updated_at = ${now} WHERE id IN (${chunk}) AND state IN ('waiting', 'ready')`);
  }
}

async function setCounts(tx: SqlExecutor, rows: Row[], idColumn: string, column: string, countColumn: string): Promise<void> {
  for (const [n, ids] of idsByCount(rows.map((r) => [Number(r[idColumn]), Number(r[countColumn])] as const))) {
    await inChunks(tx, ids, (list) => sql`UPDATE jobs SET ${sql.raw(column)} = ${n} WHERE id IN (${list})`);
  }
}

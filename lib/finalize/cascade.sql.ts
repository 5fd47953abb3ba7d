import { inChunks, skewedListChunk } from '../database/in-chunks';
import { chunked, LIST_CHUNK, sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';
import { countDownLenient } from './lenient-countdown.sql';
import { applyCountsMysql, promoteDependentsMysql } from './promote-mysql.sql';
import { jobsWithManyDependents, openPromotionCursors, PROMOTION_SLICE } from './promotion-slices.sql';
import { toSettled, type CascadeResult, type SettledJob } from './settled-job';

/**
 * Everything that follows from jobs reaching a terminal state, in the same transaction:
 * - a `done` job counts down `pending_deps` of its dependents; one reaching zero becomes ready;
 * - a `failed` or `cancelled` job cancels its dependents, which cancel theirs in turn, except
 *   those that wait for it with allowFailure: they are counted down as for a `done` job;
 * - a container counts down `pending_children`; at zero it settles itself, `failed` if any
 *   child did not complete, and is then handled like any other settled job.
 * Each step is a single UPDATE on the affected rows, so two upstreams finishing at once
 * serialize on the dependent's row lock and exactly one of them sees the count reach zero.
 * The loop ends because every round only touches rows that were not yet terminal.
 */
export async function cascade(tx: SqlExecutor, initial: SettledJob[]): Promise<CascadeResult> {
  const all: SettledJob[] = [];
  let promoted = 0;
  let sliced = 0;
  let frontier = initial;
  while (frontier.length) {
    const next: SettledJob[] = [];
    const done = frontier.filter((s) => s.outcome === 'done').map((s) => s.id);
    if (done.length) {
      const p = await promoteDependents(tx, done);
      promoted = promoted < 0 || p.promoted < 0 ? -1 : promoted + p.promoted;
      sliced += p.sliced;
    }
    const byCause = new Map<number, number[]>();
    for (const s of frontier) {
      if (s.outcome === 'done') continue;
      const cause = s.cause ?? s.id;
      const ids = byCause.get(cause);
      if (ids) ids.push(s.id);
      else byCause.set(cause, [s.id]);
    }
    // One cancel statement per cause, since its message names the cause. cancelMany's batches have
    // as many causes as jobs (each its own), nearly all without dependents: 100,000 statements
    // took 50 s on PostgreSQL, 35 s on MariaDB. So first read which open dependents each has,
    // and give each dependent to the first cause that reaches it (the one whose statement would
    // cancel it): a cause left with none needs no statement. Ten upstreams of one dependent were
    // ten statements, nine of which found it cancelled already. A single cause too: the round
    // after a fan-out's has its 100,000 cancelled dependents, usually without dependents of their
    // own, and an index read of job_deps per slice says so where a cancel statement per slice ran.
    const open = byCause.size ? await openDependents(tx, frontier.filter((s) => s.outcome !== 'done').map((s) => s.id)) : null;
    const dependents = open?.dependents;
    // Dependents waiting with allowFailure are counted down instead (after the cancels: one also
    // cancelled through a strict edge is then left alone).
    const lenient = open?.lenient;
    const reached = new Set<number>();
    for (const [cause, all] of byCause) {
      let ids = all;
      if (dependents) {
        ids = all.filter((id) => dependents.has(id));
        let claims = false;
        for (const id of ids) {
          for (const d of dependents.get(id)!) {
            if (!reached.has(d)) (reached.add(d), (claims = true));
          }
        }
        if (!claims) continue;
      }
      if (ids.length) append(next, await cancelDependents(tx, ids, cause, !open?.locked, open?.strictOnly !== false));
    }
    if (lenient?.size) {
      const p = await countDownLenient(tx, lenient);
      promoted = promoted < 0 || p < 0 ? -1 : promoted + p;
    }
    append(next, await rollUpParents(tx, frontier));
    append(all, frontier);
    frontier = next;
  }
  return { settled: all, promoted, sliced };
}

/** Per dependent of `doneIds`, how many of them it waits for, in id order. */
function countsOf(doneIds: readonly number[]): Sql {
  return sql`SELECT job_id, COUNT(*) AS n FROM job_deps WHERE depends_on_id IN (${sql.list(doneIds)}) GROUP BY job_id ORDER BY job_id`;
}

/**
 * Counts down the dependents of `doneIds` and readies those with nothing left to wait for, one
 * set-based statement per slice of finished jobs: a job with 100,000 dependents binds one
 * parameter, not 100,000, and its dependents never travel through this process (MySQL: see
 * promoteDependentsMysql). A job with more dependents than one slice only gets a promotion cursor
 * here (PostgreSQL's one-statement completes do the same, migration 24); SlicedPromotions counts
 * its dependents down after the commit, a transaction per slice (`sliced` says how many cursors
 * were opened).
 */
async function promoteDependents(tx: SqlExecutor, doneIds: number[]): Promise<{ promoted: number; sliced: number }> {
  let promoted = 0;
  let sliced = 0;
  const now = tx.dialect.now();
  for (const all of chunked(doneIds, skewedListChunk(tx.dialect))) {
    let chunk = all;
    if (tx.dialect.name === 'mysql') {
      // The counts come back here anyway: read a slice's worth first. Each dependent is one row,
      // so a job with more dependents than a slice makes it overflow; otherwise this is the only
      // read, as before the cursors (a round trip per finalize is what MariaDB's throughput costs).
      const { rows } = await tx.run(sql`${countsOf(all)} LIMIT ${PROMOTION_SLICE + 1}`);
      if (rows.length <= PROMOTION_SLICE) {
        if (rows.length && (await applyCountsMysql(tx, rows)) < 0) promoted = -1;
        continue;
      }
    }
    const many = await jobsWithManyDependents(tx, all);
    if (many.length) {
      await openPromotionCursors(tx, many);
      sliced += many.length;
      const deferred = new Set(many);
      chunk = all.filter((id) => !deferred.has(id));
      if (!chunk.length) continue;
    }
    // In id order: the promoted rows' new index entries then go in at each index's end, and their
    // locks are taken in the order every other multi-row write takes them (PostgreSQL migration 22).
    const counts = countsOf(chunk);
    if (tx.dialect.name === 'mysql') {
      const p = await promoteDependentsMysql(tx, counts);
      if (p < 0) promoted = -1;
      else if (promoted >= 0) promoted += p;
      continue;
    }
    // PostgreSQL and SQLite evaluate every SET expression on the row's old values.
    const { rows } = await tx.run(sql`UPDATE jobs SET
        state = CASE WHEN jobs.state = 'waiting' AND jobs.is_container = 0 AND jobs.pending_deps - dep.n <= 0 THEN 'ready' ELSE jobs.state END,
        pending_deps = jobs.pending_deps - dep.n, updated_at = ${now}
      FROM (${counts}) AS dep WHERE jobs.id = dep.job_id
      RETURNING jobs.state`);
    for (const r of rows) if (r.state === 'ready') promoted++;
  }
  return { promoted, sliced };
}

/** The states a dependent may be in when its upstream ends: open, or closed by another upstream. */
const UNDONE = sql.raw(`'waiting', 'ready', 'failed', 'cancelled'`);

/**
 * Per job of `ids` that has any, its dependents a cascade could still cancel, read from job_deps'
 * depends_on_id index in the skewed-list slices every such list uses (MariaDB read the whole
 * index for an EXISTS semi-join over a list of ids; skewed-lists.spec). Up to LIST_CHUNK
 * distinct dependents, those already finished are left out (one locking read by primary key,
 * `locked`); past that, every dependent counts as open. A join of job_deps to jobs in one
 * statement cost PostgreSQL 6–14 ms per slice of 500 (a merge join along jobs' primary key)
 * where these two reads cost 1–2.
 *
 * The read locks failed and cancelled dependents too, and waits for them: a `retry()` that has
 * reopened one and not yet committed read this cascade's upstream as still running, so it left
 * the dependent waiting for it. Read without the lock, the dependent was still cancelled, the
 * upstream's failure cancelled nothing, and the dependent waited for ever (retry-race.spec).
 */
async function openDependents(tx: SqlExecutor, ids: readonly number[]): Promise<OpenDependents> {
  const edges = await inChunks(tx, ids, (list, chunk) => dependentEdges(tx.dialect.name, list, chunk), skewedListChunk(tx.dialect));
  const dependents = new Map<number, number[]>();
  const lenient = new Map<number, number>();
  if (!edges.length) return { dependents, lenient, locked: true, strictOnly: false };
  // PostgreSQL and SQLite return an edge that allows failure twice, once marked.
  const lenientEdges = new Set<string>();
  for (const e of edges) if (Number(e.allow_failure) === 1) lenientEdges.add(`${e.depends_on_id}:${e.job_id}`);
  const candidates = [...new Set(edges.map((e) => Number(e.job_id)))];
  let open: Set<number> | null = null;
  if (candidates.length <= LIST_CHUNK) {
    // SQLite: NOT INDEXED keeps its planner on the rowid (without statistics it may walk the ready
    // index instead); its single writer needs no lock.
    const d = tx.dialect.name;
    const byIdOnly = d === 'sqlite' ? sql.raw(' NOT INDEXED') : sql``;
    const lock = d === 'sqlite' ? sql`` : sql` ORDER BY id FOR UPDATE`;
    const { rows } = await tx.run(sql`SELECT id, state FROM jobs${byIdOnly} WHERE id IN (${sql.list(candidates.sort((a, b) => a - b))}) AND state IN (${UNDONE})${lock}`);
    open = new Set(rows.filter((r) => r.state === 'waiting' || r.state === 'ready').map((r) => Number(r.id)));
  }
  for (const e of edges) {
    const id = Number(e.job_id);
    if (open && !open.has(id)) continue;
    if (lenientEdges.size && lenientEdges.has(`${e.depends_on_id}:${e.job_id}`)) {
      if (Number(e.allow_failure) === 1) lenient.set(id, (lenient.get(id) ?? 0) + 1);
      continue;
    }
    const up = Number(e.depends_on_id);
    const list = dependents.get(up);
    if (list) list.push(id);
    else dependents.set(up, [id]);
  }
  return { dependents, lenient, locked: open !== null, strictOnly: lenientEdges.size > 0 };
}

/**
 * The edges from a slice of upstreams to their dependents, with `allow_failure`. PostgreSQL and
 * SQLite read them as before, from (depends_on_id, job_id) alone (PostgreSQL: an index-only scan),
 * and those that allow failure once more from their own partial index, nearly always empty: the
 * column read with every edge cost a 1 → 100,000 cancel 8% on both. PostgreSQL binds the ids once,
 * as an array: the list twice cost 5%. MariaDB's secondary index holds no column beyond the key,
 * so it reads the column (no cost measured: 4.53 s either way).
 */
function dependentEdges(dialect: string, list: ReturnType<typeof sql.list>, ids: readonly number[]): Sql {
  if (dialect === 'mysql') return sql`SELECT depends_on_id, job_id, allow_failure FROM job_deps WHERE depends_on_id IN (${list})`;
  if (dialect === 'postgres') {
    const array = `{${ids.join(',')}}`;
    return sql`SELECT depends_on_id, job_id, 0 AS allow_failure FROM job_deps WHERE depends_on_id = ANY(${array}::bigint[])
      UNION ALL SELECT depends_on_id, job_id, 1 FROM job_deps WHERE depends_on_id = ANY(${array}::bigint[]) AND allow_failure = 1`;
  }
  return sql`SELECT depends_on_id, job_id, 0 AS allow_failure FROM job_deps WHERE depends_on_id IN (${list})
    UNION ALL SELECT depends_on_id, job_id, 1 FROM job_deps WHERE depends_on_id IN (${list}) AND allow_failure = 1`;
}

interface OpenDependents {
  /** Per upstream, its open dependents along strict edges: the ones its failure cancels. */
  dependents: Map<number, number[]>;
  /** Per open dependent along edges that allow failure, how many of them lead to it from the upstreams. */
  lenient: Map<number, number>;
  locked: boolean;
  /** Some edge read allows failure: the cancel must leave such edges out. */
  strictOnly: boolean;
}

/**
 * Cancels the open dependents of `badIds`. `waitForReopened`: first lock their failed and
 * cancelled dependents (see openDependents) where nothing has yet. PostgreSQL only: its UPDATE
 * passes over a row whose committed version does not match without waiting for the transaction
 * that changes it, where MySQL's locking read waits for the row and reads it again.
 *
 * PostgreSQL reads the state as `state || ''` so that both statements go through job_deps and
 * the primary key, never along the (state, id) index: with statistics from before a large
 * enqueue (most rows finished, say), the planner took that index for the fan-out's 100,000
 * waiting dependents and probed job_deps once for each of them, 10^10 index reads (a cancelled
 * 1 → 100,000 fan-out's first statement ran for minutes; `.scratch/cancel-fanout.js`).
 */
async function cancelDependents(tx: SqlExecutor, badIds: number[], cause: number, waitForReopened: boolean, strictOnly: boolean): Promise<SettledJob[]> {
  const out: SettledJob[] = [];
  const now = tx.dialect.now();
  const pg = tx.dialect.name === 'postgres';
  const state = sql.raw(pg ? `state || ''` : 'state');
  for (const chunk of chunked(badIds, skewedListChunk(tx.dialect))) {
    const strict = strictOnly ? sql` AND allow_failure = 0` : sql``;
    const dependentsOf = sql`id IN (SELECT job_id FROM job_deps WHERE depends_on_id IN (${sql.list(chunk)})${strict})`;
    if (waitForReopened && pg) await tx.run(sql`SELECT id FROM jobs WHERE ${dependentsOf} AND ${state} IN ('failed', 'cancelled') ORDER BY id FOR UPDATE`);
    const rows = await updateReturning(
      tx,
      sql`state = 'cancelled', last_error = ${`cancelled: upstream job ${cause} failed or was cancelled`},
        finished_at = ${now}, lease_owner = NULL, lease_expires = NULL, updated_at = ${now}`,
      sql`${dependentsOf} AND ${state} IN ('waiting', 'ready')`,
      sql`id, parent_id`,
    );
    for (const r of rows) out.push(toSettled(r, 'cancelled', cause));
  }
  return out;
}

async function rollUpParents(tx: SqlExecutor, settled: SettledJob[]): Promise<SettledJob[]> {
  const perParent = new Map<number, { children: number; bad: number }>();
  for (const s of settled) {
    if (s.parentId === null) continue;
    const e = perParent.get(s.parentId) ?? { children: 0, bad: 0 };
    e.children++;
    if (s.outcome !== 'done') e.bad++;
    perParent.set(s.parentId, e);
  }
  if (!perParent.size) return [];
  const now = tx.dialect.now();
  const groups = new Map<string, number[]>();
  for (const [id, e] of perParent) {
    const key = `${e.children}:${e.bad}`;
    const ids = groups.get(key);
    if (ids) ids.push(id);
    else groups.set(key, [id]);
  }
  for (const [key, ids] of groups) {
    const [children, bad] = key.split(':').map(Number);
    for (const chunk of chunked(ids.sort((a, b) => a - b))) {
      await tx.run(sql`UPDATE jobs SET pending_children = pending_children - ${children}, failed_children = failed_children + ${bad},
        updated_at = ${now} WHERE id IN (${sql.list(chunk)})`);
    }
  }
  const out: SettledJob[] = [];
  for (const chunk of chunked([...perParent.keys()].sort((a, b) => a - b))) {
    const rows = await updateReturning(
      tx,
      sql`state = CASE WHEN failed_children > 0 THEN 'failed' ELSE 'done' END,
        last_error = CASE WHEN failed_children > 0 THEN 'one or more child jobs failed or were cancelled' ELSE NULL END,
        progress = CASE WHEN failed_children > 0 THEN progress ELSE 100 END,
        finished_at = ${now}, updated_at = ${now}`,
      sql`id IN (${sql.list(chunk)}) AND state = 'waiting' AND is_container = 1 AND pending_children <= 0`,
      sql`id, parent_id, failed_children`,
    );
    for (const r of rows) out.push(toSettled(r, Number(r.failed_children) > 0 ? 'failed' : 'done'));
  }
  return out;
}

/** `target.push(...items)` without spreading: a spread of 100,000 arguments overflows the stack. */
function append<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

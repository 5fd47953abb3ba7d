import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';
import { toSettled, type CascadeResult, type SettledJob } from './settled-job';

const CHUNK = 1_000;

/**
 * Everything that follows from jobs reaching a terminal state, in the same transaction:
 * - a `done` job counts down `pending_deps` of its dependents; one reaching zero becomes ready;
 * - a `failed` or `cancelled` job cancels its dependents, which cancel theirs in turn;
 * - a container counts down `pending_children`; at zero it settles itself, `failed` if any
 *   child did not complete, and is then handled like any other settled job.
 * Each step is a single UPDATE on the affected rows, so two upstreams finishing at once
 * serialize on the dependent's row lock and exactly one of them sees the count reach zero.
 * The loop ends because every round only touches rows that were not yet terminal.
 */
export async function cascade(tx: SqlExecutor, initial: SettledJob[]): Promise<CascadeResult> {
  const all: SettledJob[] = [];
  let promoted = 0;
  let frontier = initial;
  while (frontier.length) {
    const next: SettledJob[] = [];
    const done = frontier.filter((s) => s.outcome === 'done').map((s) => s.id);
    if (done.length) {
      const p = await promoteDependents(tx, done);
      promoted = promoted < 0 || p < 0 ? -1 : promoted + p;
    }
    const byCause = new Map<number, number[]>();
    for (const s of frontier) {
      if (s.outcome === 'done') continue;
      const cause = s.cause ?? s.id;
      byCause.set(cause, [...(byCause.get(cause) ?? []), s.id]);
    }
    for (const [cause, ids] of byCause) next.push(...(await cancelDependents(tx, ids, cause)));
    next.push(...(await rollUpParents(tx, frontier)));
    all.push(...frontier);
    frontier = next;
  }
  return { settled: all, promoted };
}

async function promoteDependents(tx: SqlExecutor, doneIds: number[]): Promise<number> {
  let promoted = 0;
  for (let i = 0; i < doneIds.length; i += CHUNK) {
    const chunk = doneIds.slice(i, i + CHUNK);
    const { rows } = await tx.run(
      sql`SELECT job_id, COUNT(*) AS n FROM job_deps WHERE depends_on_id IN (${sql.list(chunk)}) GROUP BY job_id`,
    );
    const byCount = new Map<number, number[]>();
    for (const r of rows) byCount.set(Number(r.n), [...(byCount.get(Number(r.n)) ?? []), Number(r.job_id)]);
    for (const [n, ids] of byCount) {
      ids.sort((a, b) => a - b); // lock order
      const now = tx.dialect.now();
      // `state` is assigned before `pending_deps`: MySQL evaluates SET left to right with new values.
      const set = sql`state = CASE WHEN state = 'waiting' AND is_container = 0 AND pending_deps - ${n} <= 0 THEN 'ready' ELSE state END,
        pending_deps = pending_deps - ${n}, updated_at = ${now}`;
      if (tx.dialect.supportsReturning) {
        const res = await tx.run(sql`UPDATE jobs SET ${set} WHERE id IN (${sql.list(ids)}) RETURNING state`);
        promoted += res.rows.filter((r) => r.state === 'ready').length;
      } else {
        await tx.run(sql`UPDATE jobs SET ${set} WHERE id IN (${sql.list(ids)})`);
        promoted = -1;
      }
    }
  }
  return promoted;
}

async function cancelDependents(tx: SqlExecutor, badIds: number[], cause: number): Promise<SettledJob[]> {
  const out: SettledJob[] = [];
  const now = tx.dialect.now();
  for (let i = 0; i < badIds.length; i += CHUNK) {
    const chunk = badIds.slice(i, i + CHUNK);
    const rows = await updateReturning(
      tx,
      sql`state = 'cancelled', last_error = ${`cancelled: upstream job ${cause} failed or was cancelled`},
        finished_at = ${now}, lease_owner = NULL, lease_expires = NULL, updated_at = ${now}`,
      sql`id IN (SELECT job_id FROM job_deps WHERE depends_on_id IN (${sql.list(chunk)})) AND state IN ('waiting', 'ready')`,
      sql`id, parent_id`,
    );
    out.push(...rows.map((r) => toSettled(r, 'cancelled', cause)));
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
  for (const [id, e] of perParent) groups.set(`${e.children}:${e.bad}`, [...(groups.get(`${e.children}:${e.bad}`) ?? []), id]);
  for (const [key, ids] of groups) {
    const [children, bad] = key.split(':').map(Number);
    await tx.run(sql`UPDATE jobs SET pending_children = pending_children - ${children}, failed_children = failed_children + ${bad},
      updated_at = ${now} WHERE id IN (${sql.list(ids.sort((a, b) => a - b))})`);
  }
  const parents = [...perParent.keys()];
  const rows = await updateReturning(
    tx,
    sql`state = CASE WHEN failed_children > 0 THEN 'failed' ELSE 'done' END,
      last_error = CASE WHEN failed_children > 0 THEN 'one or more child jobs failed or were cancelled' ELSE NULL END,
      progress = CASE WHEN failed_children > 0 THEN progress ELSE 100 END,
      finished_at = ${now}, updated_at = ${now}`,
    sql`id IN (${sql.list(parents)}) AND state = 'waiting' AND is_container = 1 AND pending_children <= 0`,
    sql`id, parent_id, failed_children`,
  );
  return rows.map((r) => toSettled(r, Number(r.failed_children) > 0 ? 'failed' : 'done'));
}

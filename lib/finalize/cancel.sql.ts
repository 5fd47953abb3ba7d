import { inChunks, skewedListChunk } from '../database/in-chunks';
import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { cascade } from './cascade.sql';
import { toSettled, type CascadeResult } from './settled-job';

export interface CancelOutcome extends CascadeResult {
  found: boolean;
  /** Jobs that were leased or running: their handlers must be told to stop. */
  wereRunning: number[];
}

export interface CancelManyOutcome extends CascadeResult {
  /** The given jobs that were unfinished when locked: the ones this call cancelled. */
  cancelled: number[];
  /** Jobs that were leased or running: their handlers must be told to stop. */
  wereRunning: number[];
}

/**
 * Cancels a job that has not finished; a container cancels its whole unfinished subtree.
 * Dependents are cancelled in turn and parents roll up (the cascade). A finished job is left
 * as it is. A running job's row turns `cancelled` at once, so its worker's finalize guard
 * refuses the result; the worker aborts the handler on the next heartbeat or notification.
 */
export async function cancelJob(tx: SqlExecutor, id: number): Promise<CancelOutcome> {
  const lock = tx.dialect.name === 'sqlite' ? sql`` : sql` FOR UPDATE`;
  const { rows: found } = await tx.run(sql`SELECT id FROM jobs WHERE id = ${id}${lock}`);
  if (!found.length) return { found: false, wereRunning: [], settled: [], promoted: 0 };
  const { wereRunning, settled, promoted } = await cancelJobs(tx, [id]);
  return { found: true, wereRunning, settled, promoted };
}

/**
 * `cancelJob` for many jobs in one pass: their subtrees are locked and cancelled in bounded
 * slices and the cascade runs once for all of them. Finished jobs are left alone.
 */
export async function cancelJobs(tx: SqlExecutor, given: readonly number[]): Promise<CancelManyOutcome> {
  const d = tx.dialect;
  const lock = d.name === 'sqlite' ? sql`` : sql` FOR UPDATE`;
  const roots = await inChunks(tx, [...new Set(given)].sort((a, b) => a - b), (list) =>
    sql`SELECT id, is_container FROM jobs WHERE id IN (${list}) ORDER BY id${lock}`);
  // Each job and the given job it is cancelled for: itself, or the container it sits in.
  const causeOf = new Map<number, number>(roots.map((r) => [Number(r.id), Number(r.id)]));
  const boxes = roots.filter((r) => Number(r.is_container) === 1).map((r) => Number(r.id));
  if (boxes.length) {
    const members = await inChunks(tx, boxes, (list) => sql`WITH RECURSIVE sub (id, root) AS (
        SELECT id, parent_id FROM jobs WHERE parent_id IN (${list})
        UNION ALL SELECT j.id, sub.root FROM jobs j JOIN sub ON j.parent_id = sub.id)
      SELECT id, root FROM sub`, skewedListChunk(d));
    for (const r of members) if (!causeOf.has(Number(r.id))) causeOf.set(Number(r.id), Number(r.root));
  }
  // A container's subtree may be any size: lock and cancel it in bounded slices, in id order.
  const open = await inChunks(tx, [...causeOf.keys()].sort((a, b) => a - b), (list) => sql`SELECT id, parent_id, state FROM jobs
      WHERE id IN (${list}) AND state NOT IN ('done', 'failed', 'cancelled') ORDER BY id${lock}`);
  if (!open.length) return { cancelled: [], wereRunning: [], settled: [], promoted: 0 };
  const now = d.now();
  const byCause = new Map<number, number[]>();
  for (const r of open) {
    const cause = causeOf.get(Number(r.id))!;
    const key = cause === Number(r.id) ? 0 : cause; // 0: the given jobs themselves
    // push, not a copy per row: a 40,000-child container copied 800 million ids (68 s on SQLite).
    const ids = byCause.get(key);
    if (ids) ids.push(Number(r.id));
    else byCause.set(key, [Number(r.id)]);
  }
  for (const [cause, ids] of byCause) {
    const message = cause === 0 ? 'cancelled' : `cancelled with its container, job ${cause}`;
    await inChunks(tx, ids, (list) => sql`UPDATE jobs SET state = 'cancelled', last_error = ${message},
        finished_at = ${now}, lease_owner = NULL, lease_expires = NULL, updated_at = ${now}
      WHERE id IN (${list})`);
  }
  const result = await cascade(
    tx,
    open.map((r) => toSettled(r, 'cancelled', causeOf.get(Number(r.id)))),
  );
  return {
    cancelled: open.filter((r) => causeOf.get(Number(r.id)) === Number(r.id)).map((r) => Number(r.id)),
    wereRunning: open.filter((r) => r.state === 'leased' || r.state === 'running').map((r) => Number(r.id)),
    ...result,
  };
}

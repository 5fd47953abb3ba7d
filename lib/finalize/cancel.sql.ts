import { chunked, sql } from '../database/sql';
import type { Row } from '../database/sql-executor';
import type { SqlExecutor } from '../database/sql-executor';
import { cascade } from './cascade.sql';
import { toSettled, type CascadeResult } from './settled-job';

export interface CancelOutcome extends CascadeResult {
  found: boolean;
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
  const d = tx.dialect;
  const lock = d.name === 'sqlite' ? sql`` : sql` FOR UPDATE`;
  const { rows: found } = await tx.run(sql`SELECT id, is_container FROM jobs WHERE id = ${id}${lock}`);
  if (!found.length) return { found: false, wereRunning: [], settled: [], promoted: 0 };
  const ids = [id];
  if (Number(found[0].is_container) === 1) {
    const { rows } = await tx.run(sql`WITH RECURSIVE sub (id) AS (
        SELECT id FROM jobs WHERE parent_id = ${id}
        UNION ALL SELECT j.id FROM jobs j JOIN sub ON j.parent_id = sub.id)
      SELECT id FROM sub`);
    for (const r of rows) ids.push(Number(r.id));
  }
  // A container's subtree may be any size: lock and cancel it in bounded slices, in id order.
  const open: Row[] = [];
  for (const chunk of chunked(ids.sort((a, b) => a - b))) {
    const { rows } = await tx.run(sql`SELECT id, parent_id, state FROM jobs
      WHERE id IN (${sql.list(chunk)}) AND state NOT IN ('done', 'failed', 'cancelled') ORDER BY id${lock}`);
    for (const r of rows) open.push(r);
  }
  if (!open.length) return { found: true, wereRunning: [], settled: [], promoted: 0 };
  const now = d.now();
  for (const chunk of chunked(open)) {
    await tx.run(sql`UPDATE jobs SET state = 'cancelled',
        last_error = CASE WHEN id = ${id} THEN 'cancelled' ELSE ${`cancelled with its container, job ${id}`} END,
        finished_at = ${now}, lease_owner = NULL, lease_expires = NULL, updated_at = ${now}
      WHERE id IN (${sql.list(chunk.map((r) => r.id))})`);
  }
  const result = await cascade(
    tx,
    open.map((r) => toSettled(r, 'cancelled', id)),
  );
  return {
    found: true,
    wereRunning: open.filter((r) => r.state === 'leased' || r.state === 'running').map((r) => Number(r.id)),
    ...result,
  };
}

import { chunked, sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';
import { NOT_STARTED_SQL } from './run-now.sql';

/**
 * Sets `run_after` and/or `priority` of the given jobs that are not claimed yet (`waiting`,
 * `ready`); claimed and finished ones are left as they are. Both are plain columns of the claim's
 * order (priority, due time, id) that no other table copies, so the next claim reads them.
 * Returns the ids it changed.
 */
export async function rescheduleJobs(tx: SqlExecutor, ids: readonly number[], change: { runAfter: Date | null; priority: number | null }): Promise<number[]> {
  const sets = [sql`updated_at = ${tx.dialect.now()}`];
  if (change.runAfter) sets.push(sql`run_after = ${tx.dialect.timeParam(change.runAfter)}`);
  if (change.priority !== null) sets.push(sql`priority = ${change.priority}`);
  const changed: number[] = [];
  for (const chunk of chunked([...new Set(ids)].sort((a, b) => a - b))) {
    const rows = await updateReturning(tx, sql.join(sets), sql`id IN (${sql.list(chunk)}) AND state IN (${NOT_STARTED_SQL})`, sql`id`);
    for (const r of rows) changed.push(Number(r.id));
  }
  return changed;
}

import { chunked, sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';

/** The states whose start `runNow` may bring forward: not yet claimed. */
export const NOT_STARTED = ['waiting', 'ready'] as const;
/** NOT_STARTED as an SQL list, for `state IN (…)`. */
export const NOT_STARTED_SQL = sql.raw(NOT_STARTED.map((s) => `'${s}'`).join(', '));

/**
 * Brings the start of the given jobs that are not claimed yet forward to now: `run_after` of a
 * delayed or backing-off `ready` job (due at once), or of a `waiting` one (due as soon as its
 * upstreams are done). Jobs already due, claimed or finished are left as they are. Returns the
 * ids it changed. Pause, caps and rate limits still apply to them, as to any ready job.
 */
export async function runJobsNow(tx: SqlExecutor, ids: readonly number[]): Promise<number[]> {
  const now = tx.dialect.now();
  const changed: number[] = [];
  for (const chunk of chunked([...new Set(ids)].sort((a, b) => a - b))) {
    const rows = await updateReturning(
      tx,
      sql`run_after = ${now}, updated_at = ${now}`,
      sql`id IN (${sql.list(chunk)}) AND state IN (${NOT_STARTED_SQL}) AND run_after > ${now}`,
      sql`id`,
    );
    for (const r of rows) changed.push(Number(r.id));
  }
  return changed;
}

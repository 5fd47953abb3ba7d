import { chunked, sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { idsByCount } from './ids-by-count';

/**
 * Counts down dependents for upstreams that failed or were cancelled along edges that allow
 * failure: `counts` maps each dependent to how many such upstreams finished in this round. As a
 * completion's promotion does, a dependent with nothing left to wait for becomes ready; one no
 * longer waiting (cancelled by a strict upstream, say) is left as it is, and a retry recounts it.
 * By id list, grouped by count, in id order: the order every multi-row write takes its locks in.
 * Returns how many became ready, or -1 where the database cannot say without another read (MySQL).
 */
export async function countDownLenient(tx: SqlExecutor, counts: ReadonlyMap<number, number>): Promise<number> {
  const now = tx.dialect.now();
  const returning = tx.dialect.supportsReturning;
  let promoted = 0;
  for (const [n, ids] of idsByCount(counts)) {
    for (const chunk of chunked(ids)) {
      // MySQL assigns left to right with new values, PostgreSQL and SQLite from the old row:
      // `state` first reads the old pending_deps on all three.
      const { rows } = await tx.run(sql`UPDATE jobs SET
          state = CASE WHEN is_container = 0 AND pending_deps - ${n} <= 0 THEN 'ready' ELSE state END,
          pending_deps = pending_deps - ${n}, updated_at = ${now}
        WHERE id IN (${sql.list(chunk)}) AND state = 'waiting'${returning ? sql` RETURNING state` : sql``}`);
      if (!returning) promoted = -1;
      else if (promoted >= 0) for (const r of rows) if (r.state === 'ready') promoted++;
    }
  }
  return promoted;
}

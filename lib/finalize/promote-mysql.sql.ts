import { chunked, sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { idsByCount } from './ids-by-count';

/**
 * MySQL/MariaDB: the counts come back to this process and go out as single-table UPDATEs by id,
 * grouped by count, in slices of 1,000 ids. A multi-table UPDATE joined to the counts was slower
 * on MariaDB 10.11 (1 → 10,000 → 1: 16.5–18.5 s against 11.9–12.5 s end to end, alternating on
 * one machine), and MySQL leaves the order of its SET assignments undefined. In a single-table
 * UPDATE, MySQL assigns left to right with new values, so `state` is assigned before `pending_deps`.
 */
export async function promoteDependentsMysql(tx: SqlExecutor, counts: Sql): Promise<number> {
  const { rows } = await tx.run(counts);
  return applyCountsMysql(tx, rows);
}

/** The UPDATEs of promoteDependentsMysql for counts already read (`job_id`, `n`). */
export async function applyCountsMysql(tx: SqlExecutor, rows: Row[]): Promise<number> {
  if (!rows.length) return 0;
  const now = tx.dialect.now();
  for (const [n, ids] of idsByCount(rows.map((r) => [Number(r.job_id), Number(r.n)] as const))) {
    for (const chunk of chunked(ids)) {
      await tx.run(sql`UPDATE jobs SET
          state = CASE WHEN state = 'waiting' AND is_container = 0 AND pending_deps - ${n} <= 0 THEN 'ready' ELSE state END,
          pending_deps = pending_deps - ${n}, updated_at = ${now}
        WHERE id IN (${sql.list(chunk)})`);
    }
  }
  return -1; // some may have been promoted: MySQL cannot say which without another read
}

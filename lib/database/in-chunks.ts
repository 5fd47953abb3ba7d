import type { SqlDialect } from './dialects/sql-dialect';
import { chunked, LIST_CHUNK, sql, type Sql } from './sql';
import type { Row, SqlExecutor } from './sql-executor';

/**
 * Slice size for `IN (…)` lists on columns whose index statistics are skewed: `parent_id` (most
 * jobs have none) and `job_deps.depends_on_id` (a fan-out's root holds most edges). MySQL and
 * MariaDB estimate a list of 200 values or more (`eq_range_index_dive_limit`) from those
 * statistics, as if every value were that common, and read the whole index or table instead:
 * 0.8 s per statement at 1,000,000 jobs, 10 ms at 100,000 edges. Shorter lists are looked up
 * value by value in the index.
 */
export function skewedListChunk(d: SqlDialect): number {
  return d.name === 'mysql' ? 199 : LIST_CHUNK;
}

/**
 * Runs `statement` once per bounded slice of `ids` (in order, under the bind limits) and returns
 * all rows. SQLite runs each on the event loop: a turn of it between slices, so timers and I/O
 * go on (other work on the database waits for the transaction as before). Cancelling or
 * retrying a container of 100,000 jobs held the event loop 1.1–1.4 s.
 */
export async function inChunks(
  tx: SqlExecutor,
  ids: readonly number[],
  statement: (list: ReturnType<typeof sql.list>, ids: readonly number[]) => Sql,
  size = LIST_CHUNK,
): Promise<Row[]> {
  const out: Row[] = [];
  const yields = tx.dialect.name === 'sqlite';
  for (const [i, chunk] of chunked(ids, size).entries()) {
    if (yields && i) await new Promise((resolve) => setImmediate(resolve));
    const { rows } = await tx.run(statement(sql.list(chunk), chunk));
    for (const r of rows) out.push(r);
  }
  return out;
}

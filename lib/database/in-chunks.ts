import type { SqlDialect } from './dialects/sql-dialect';
import { chunked, LIST_CHUNK, sql, type Sql } from './sql';
import type { Row, SqlExecutor } from './sql-executor';

/**
 * Slice size for `parent_id IN (…)` lists. MySQL and MariaDB estimate an IN list of 200 values or
 * more (`eq_range_index_dive_limit`) from the index statistics, in which every job without a
 * parent (most of them) counts as one value, and then read the whole table: 0.8 s per statement
 * at 1,000,000 jobs. Shorter lists are looked up value by value in the index.
 */
export function parentListChunk(d: SqlDialect): number {
  return d.name === 'mysql' ? 100 : LIST_CHUNK;
}

/** Runs `statement` once per bounded slice of `ids` (in order, under the bind limits) and returns all rows. */
export async function inChunks(
  tx: SqlExecutor,
  ids: readonly number[],
  statement: (list: ReturnType<typeof sql.list>) => Sql,
  size = LIST_CHUNK,
): Promise<Row[]> {
  const out: Row[] = [];
  for (const chunk of chunked(ids, size)) {
    const { rows } = await tx.run(statement(sql.list(chunk)));
    for (const r of rows) out.push(r);
  }
  return out;
}

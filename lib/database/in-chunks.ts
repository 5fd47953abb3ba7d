import { chunked, sql, type Sql } from './sql';
import type { Row, SqlExecutor } from './sql-executor';

/** Runs `statement` once per bounded slice of `ids` (in order, under the bind limits) and returns all rows. */
export async function inChunks(tx: SqlExecutor, ids: readonly number[], statement: (list: ReturnType<typeof sql.list>) => Sql): Promise<Row[]> {
  const out: Row[] = [];
  for (const chunk of chunked(ids)) {
    const { rows } = await tx.run(statement(sql.list(chunk)));
    for (const r of rows) out.push(r);
  }
  return out;
}

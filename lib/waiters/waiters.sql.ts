import { jobColumns } from '../database/job-row';
import { sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';

/**
 * `id IN (…)` for one chunk of ids: on PostgreSQL a single array parameter (no planning of
 * thousands of parameters), elsewhere one parameter per id (callers chunk under the bind limit).
 */
function idIn(executor: SqlExecutor, ids: readonly number[]): Sql {
  return executor.dialect.name === 'postgres' ? sql`id = ANY(${ids}::bigint[])` : sql`id IN (${sql.list(ids)})`;
}

/** The state of each of these jobs that still exists: the waiters' poll, one chunk at a time. */
export async function selectJobStates(executor: SqlExecutor, ids: readonly number[]): Promise<Array<{ id: number; state: string }>> {
  const { rows } = await executor.run(sql`SELECT id, state FROM jobs WHERE ${idIn(executor, ids)}`);
  return rows.map((r) => ({ id: Number(r.id), state: String(r.state) }));
}

/** Whole rows of these jobs (to resolve their waiters with), one chunk at a time. */
export async function selectJobRows(executor: SqlExecutor, ids: readonly number[]): Promise<Row[]> {
  const { rows } = await executor.run(sql`SELECT ${jobColumns(executor.dialect)} FROM jobs WHERE ${idIn(executor, ids)}`);
  return rows;
}

import { jobColumns } from '../database/job-row';
import { sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { TERMINAL_STATES } from '../job.types';

/**
 * `id IN (…)` for one chunk of ids: on PostgreSQL a single array parameter (no planning of
 * thousands of parameters), sent as its text form (`{1,2,3}`: node-postgres would escape every
 * element of a number array one by one), elsewhere one parameter per id (callers chunk under
 * the bind limit).
 */
function idIn(executor: SqlExecutor, ids: readonly number[]): Sql {
  return executor.dialect.name === 'postgres' ? sql`id = ANY(${`{${ids.join(',')}}`}::bigint[])` : sql`id IN (${sql.list(ids)})`;
}

const SETTLED = sql.raw(TERMINAL_STATES.map((s) => `'${s}'`).join(', '));

/** The state of each of these jobs that still exists: a new watch's first lookup, one chunk at a time. */
export async function selectJobStates(executor: SqlExecutor, ids: readonly number[]): Promise<Array<{ id: number; state: string }>> {
  const { rows } = await executor.run(sql`SELECT id, state FROM jobs WHERE ${idIn(executor, ids)}`);
  return rows.map((r) => ({ id: Number(r.id), state: String(r.state) }));
}

export interface PolledChunk {
  /** How many of the ids still exist (fewer than asked: some were deleted). */
  found: number;
  /** The settled ones among them. */
  settled: number[];
}

/**
 * The poll of one chunk of pending ids: the settled ones and how many still exist, so a chunk
 * where nothing changed comes back as one row instead of a row per id (10,000 waiters polled
 * every interval would otherwise cost the worker a 10,000-row read per interval).
 */
export async function selectSettledAmong(executor: SqlExecutor, ids: readonly number[]): Promise<PolledChunk> {
  const { rows } = await executor.run(sql`
    SELECT id, state, found FROM (
      SELECT id, state, COUNT(*) OVER () AS found, ROW_NUMBER() OVER () AS n FROM jobs WHERE ${idIn(executor, ids)}
    ) polled
    WHERE state IN (${SETTLED}) OR n = 1`);
  return {
    found: rows.length ? Number(rows[0].found) : 0,
    settled: rows.filter((r) => TERMINAL_STATES.includes(r.state as never)).map((r) => Number(r.id)),
  };
}

/** Whole rows of these jobs (to resolve their waiters with), one chunk at a time. */
export async function selectJobRows(executor: SqlExecutor, ids: readonly number[]): Promise<Row[]> {
  const { rows } = await executor.run(sql`SELECT ${jobColumns(executor.dialect)} FROM jobs WHERE ${idIn(executor, ids)}`);
  return rows;
}

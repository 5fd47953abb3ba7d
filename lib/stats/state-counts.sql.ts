import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobState } from '../job.types';

/** Where the queue's work is: bounded by the backlog, counted on every read. */
export const OPEN_STATES = ['waiting', 'ready', 'leased', 'running'] as const satisfies readonly JobState[];
/** Every finished job kept (until retention removes it): grows without bound. */
export const TERMINAL_STATES = ['done', 'failed', 'cancelled'] as const satisfies readonly JobState[];

/**
 * SQLite: index entries one statement counts at most. better-sqlite3 runs a statement on the
 * event loop: one GROUP BY over 1,000,000 done and 200,000 ready jobs held it for 95-110 ms; a
 * slice of 10,000 takes about 0.9 ms, and the loop gets a turn between slices.
 */
export const SQLITE_COUNT_SLICE = 10_000;

/** Jobs in each of `states` (every one present, 0 when none), counted exactly from the state indexes. */
export async function countStates<S extends JobState>(db: SqlExecutor, states: readonly S[]): Promise<Record<S, number>> {
  const counts = Object.fromEntries(states.map((s) => [s, 0])) as Record<S, number>;
  if (db.dialect.name === 'sqlite') {
    for (const state of states) counts[state] = await countSqliteState(db, state);
    return counts;
  }
  const { rows } = await db.run(countStatement(db, states));
  for (const r of rows) counts[r.state as S] = Number(r.n);
  return counts;
}

/**
 * PostgreSQL: leased/running rows are in no state index but the in-flight one (the find index
 * leaves them out), so they are counted from that one, the rest from jobs_find_state_idx by an
 * index-only scan; one seq scan of the table read every row before. MySQL: (state, id) covers it.
 */
function countStatement(db: SqlExecutor, states: readonly JobState[]) {
  const inFlight = states.filter((s) => s === 'leased' || s === 'running');
  const rest = states.filter((s) => s !== 'leased' && s !== 'running');
  const arm = (list: readonly JobState[]) => sql`SELECT state, COUNT(*) AS n FROM jobs WHERE state IN (${sql.list([...list])}) GROUP BY state`;
  if (db.dialect.name === 'postgres' && inFlight.length && rest.length) return sql`${arm(rest)} UNION ALL ${arm(inFlight)}`;
  return arm(states);
}

/** SQLite: one state, by slices of its (state, id) index entries, letting the event loop run between them. */
async function countSqliteState(db: SqlExecutor, state: JobState): Promise<number> {
  let total = 0;
  let after = 0;
  for (;;) {
    const { rows } = await db.run(sqliteSliceStatement(state, after));
    const n = Number(rows[0]?.n ?? 0);
    total += n;
    if (n < SQLITE_COUNT_SLICE) return total;
    after = Number(rows[0].last);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Without INDEXED BY, SQLite walked the primary key for `id > ?` ORDER BY id: the whole table. */
export function sqliteSliceStatement(state: JobState, after: number) {
  return sql`SELECT COUNT(*) AS n, MAX(id) AS last FROM (SELECT id FROM jobs INDEXED BY jobs_state_id_idx
    WHERE state = ${state} AND id > ${after} ORDER BY id LIMIT ${SQLITE_COUNT_SLICE})`;
}

import { jobColumns } from '../database/job-row';
import { sql, type Sql } from '../database/sql';
import { storedBytes } from '../database/stored-bytes';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { JOB_STATES, TERMINAL_STATES } from '../job.types';

/**
 * A chunk of ids as a one-column row source `w(id)`, bound as one parameter whatever its size:
 * a bigint array on PostgreSQL (sent in its text form `{1,2,3}`: node-postgres would escape a
 * number array element by element), a JSON array through `json_each` (SQLite) or `JSON_TABLE`
 * (MySQL 8.0.4+, MariaDB 10.6+). One parameter instead of one per id: no bind limit, no
 * statement text of 10,000 placeholders to build and parse, and on SQLite (whose statements
 * run on the worker's own thread) a poll of 10,000 ids costs ~1–5 ms instead of ~15.
 */
function idRows(executor: SqlExecutor, ids: readonly number[]): Sql {
  switch (executor.dialect.name) {
    case 'postgres':
      return sql`unnest(${`{${ids.join(',')}}`}::bigint[]) AS w(id)`;
    case 'sqlite':
      return sql`(SELECT value AS id FROM json_each(${JSON.stringify(ids)})) AS w`;
    default:
      return sql`JSON_TABLE(${JSON.stringify(ids)}, '$[*]' COLUMNS (id BIGINT PATH '$')) AS w`;
  }
}

function idIn(executor: SqlExecutor, ids: readonly number[]): Sql {
  return executor.dialect.name === 'postgres' ? sql`id = ANY(${`{${ids.join(',')}}`}::bigint[])` : sql`id IN (SELECT id FROM ${idRows(executor, ids)})`;
}

const SETTLED = sql.raw(TERMINAL_STATES.map((s) => `'${s}'`).join(', '));

export interface StoredJobState {
  id: number;
  state: string;
  /** Settled: bytes of its args and result (see storedBytes), what reading it in full takes; else 0. */
  bytes: number;
}

/** The state and size of each of these jobs that still exists: a new watch's first lookup, one chunk at a time. */
export async function selectJobStates(executor: SqlExecutor, ids: readonly number[]): Promise<StoredJobState[]> {
  // Sized only when settled (to be read): MySQL's LENGTH() reads an off-page value to measure it.
  const { rows } = await executor.run(
    executor.dialect.name === 'sqlite'
      ? sqliteJobStates(ids)
      : sql`SELECT id, state, CASE WHEN state IN (${SETTLED}) THEN ${storedBytes(executor.dialect)} ELSE 0 END AS bytes FROM jobs WHERE ${idIn(executor, ids)}`,
  );
  return rows.map((r) => ({ id: Number(r.id), state: String(r.state), bytes: Number(r.bytes) }));
}

const EVERY_STATE = sql.raw(JOB_STATES.map((s) => `'${s}'`).join(', '));

/**
 * SQLite: the same from the (state, id) index, one probe per state and id, without reading the
 * rows (see sqliteSettledAmong): 10,000 waits begun together on jobs with 1 MB args walked
 * 10 GB of overflow pages for their states. The settled ones' sizes come from record headers.
 */
function sqliteJobStates(ids: readonly number[]): Sql {
  return sql`SELECT s.id AS id, s.state AS state, CASE WHEN s.state IN (${SETTLED}) THEN octet_length(f.args) + COALESCE(octet_length(f.result), 0) ELSE 0 END AS bytes
    FROM jobs s INDEXED BY jobs_state_id_idx LEFT JOIN jobs f ON f.id = s.id AND s.state IN (${SETTLED})
    WHERE s.state IN (${EVERY_STATE}) AND s.id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
}

export interface PolledChunk {
  /** Done, failed or cancelled, with their size: to be read in full and resolved. */
  settled: Array<{ id: number; bytes: number }>;
  /** No such job any more (removed by retention or by hand): their waiters fail. */
  missing: number[];
}

/**
 * The poll of one chunk of pending ids: only the ones that changed come back (settled, or gone),
 * so a chunk where nothing changed is an empty result instead of a row per id. An outer join
 * from the ids, with no window or count over them: one primary-key probe per id.
 */
export async function selectSettledAmong(executor: SqlExecutor, ids: readonly number[]): Promise<PolledChunk> {
  const { rows } = await executor.run(executor.dialect.name === 'sqlite' ? sqliteSettledAmong(ids) : sql`
    SELECT w.id AS id, j.state AS state, ${storedBytes(executor.dialect, 'j.')} AS bytes FROM ${idRows(executor, ids)} LEFT JOIN jobs j ON j.id = w.id
    WHERE j.id IS NULL OR j.state IN (${SETTLED})`);
  const out: PolledChunk = { settled: [], missing: [] };
  for (const r of rows) {
    if (r.state == null) out.missing.push(Number(r.id));
    else out.settled.push({ id: Number(r.id), bytes: Number(r.bytes) });
  }
  return out;
}

/**
 * SQLite: the same, without reading the rows. A SQLite row stores `state` after the args, so
 * reading it walks the args' overflow pages: a poll of 10,000 waiters on jobs with 100 KB args
 * took 180 ms of the event loop, every poll interval. The settled ones come from the (state, id)
 * index alone, and a job that is gone is a primary-key probe that reads no column: 2.5 ms.
 * The sizes of the settled ones come from their record headers (octet_length), not their values.
 */
function sqliteSettledAmong(ids: readonly number[]): Sql {
  const list = JSON.stringify(ids);
  return sql`SELECT j.id AS id, j.state AS state, octet_length(f.args) + COALESCE(octet_length(f.result), 0) AS bytes
      FROM jobs j INDEXED BY jobs_state_id_idx JOIN jobs f ON f.id = j.id
      WHERE j.state IN (${SETTLED}) AND j.id IN (SELECT value FROM json_each(${list}))
    UNION ALL
    SELECT w.value AS id, NULL AS state, 0 AS bytes FROM json_each(${list}) w WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = w.value)`;
}

/** Whole rows of these jobs (to resolve their waiters with), one slice of a few MB at a time. */
export async function selectJobRows(executor: SqlExecutor, ids: readonly number[]): Promise<Row[]> {
  const { rows } = await executor.run(sql`SELECT ${jobColumns(executor.dialect)} FROM jobs WHERE ${idIn(executor, ids)}`);
  return rows;
}

export interface CappedRow {
  id: number;
  state: string;
  bytes: number;
  /** The whole row, if its args and result weigh at most the cap; else null (read it later). */
  row: Row | null;
}

/**
 * Jobs heard of as settled, their size unknown: in one statement, whole rows of those whose args
 * and result weigh at most `capBytes` each, and the id, state and size of the others (a left
 * join on the size, so a large value is never sent).
 */
export async function selectRowsWithin(executor: SqlExecutor, ids: readonly number[], capBytes: number): Promise<CappedRow[]> {
  const { rows } = await executor.run(sql`
    SELECT s.id AS w_id, s.state AS w_state, s.bytes AS w_bytes, ${jobColumns(executor.dialect, 'f')}
    FROM (SELECT id, state, ${storedBytes(executor.dialect)} AS bytes FROM jobs WHERE ${idIn(executor, ids)}) s
    LEFT JOIN jobs f ON f.id = s.id AND s.bytes <= ${capBytes}`);
  return rows.map((r) => ({ id: Number(r.w_id), state: String(r.w_state), bytes: Number(r.w_bytes), row: r.id == null ? null : r }));
}

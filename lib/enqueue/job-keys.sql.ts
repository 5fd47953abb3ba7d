import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { KeyHolder } from './key-mode';

/**
 * Locks the key's row in `job_queue_keys` (creating it if new) until the transaction ends, and
 * returns the end of its throttle window (epoch ms, null if none) and the database clock. An
 * upsert rather than insert-if-missing-then-lock: on MySQL concurrent duplicate inserts take
 * shared locks, and their upgrade to exclusive deadlocks; the upsert takes the exclusive lock
 * at once. SQLite's BEGIN IMMEDIATE already excludes every other writer.
 */
export async function lockKey(tx: SqlExecutor, key: string): Promise<{ windowEndsMs: number | null; nowMs: number }> {
  const d = tx.dialect.name;
  if (d === 'postgres') {
    await tx.run(sql`INSERT INTO job_queue_keys (job_key) VALUES (${key}) ON CONFLICT (job_key) DO UPDATE SET job_key = EXCLUDED.job_key`);
  } else if (d === 'mysql') {
    await tx.run(sql`INSERT INTO job_queue_keys (job_key) VALUES (${key}) ON DUPLICATE KEY UPDATE job_key = VALUES(job_key)`);
  } else {
    await tx.run(sql`INSERT OR IGNORE INTO job_queue_keys (job_key) VALUES (${key})`);
  }
  const { rows } = await tx.run(sql`SELECT window_ends_ms, ${nowMs(tx)} AS now_ms FROM job_queue_keys WHERE job_key = ${key}`);
  return { windowEndsMs: rows[0].window_ends_ms == null ? null : Number(rows[0].window_ends_ms), nowMs: Number(rows[0].now_ms) };
}

/** The database's clock in epoch milliseconds, the one throttle windows are set and read by. */
export function nowMs(tx: SqlExecutor): Sql {
  const d = tx.dialect.name;
  return d === 'postgres'
    ? sql`(extract(epoch from clock_timestamp()) * 1000)::float8`
    : d === 'mysql'
      ? sql`TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) / 1000`
      : sql`(julianday('now') - 2440587.5) * 86400000.0`;
}

export async function setKeyWindow(tx: SqlExecutor, key: string, windowEndsMs: number | null): Promise<void> {
  await tx.run(sql`UPDATE job_queue_keys SET window_ends_ms = ${windowEndsMs === null ? null : Math.ceil(windowEndsMs)} WHERE job_key = ${key}`);
}

/** The job holding the key now (the unique index allows one). */
export async function keyHolder(tx: SqlExecutor, key: string): Promise<KeyHolder | null> {
  const { rows } = await tx.run(sql`SELECT id, state FROM jobs WHERE job_key = ${key}`);
  return rows.length ? { id: Number(rows[0].id), state: String(rows[0].state) } : null;
}

/** The holder gives its key up to the job about to be created (its view then shows no key). */
export async function releaseKey(tx: SqlExecutor, id: number): Promise<void> {
  await tx.run(sql`UPDATE jobs SET job_key = NULL WHERE id = ${id}`);
}

/**
 * Debounce: new args and a later run time for a job not claimed yet. The state guard makes a
 * claim that got there first win (the row lock orders the two): 0 rows, and a new job is made.
 */
export async function debounceJob(tx: SqlExecutor, id: number, argsJson: string, runAfter: Date): Promise<boolean> {
  const d = tx.dialect;
  const result = await tx.run(sql`UPDATE jobs SET args = ${argsJson}, run_after = ${d.timeParam(runAfter)}, updated_at = ${d.now()}
    WHERE id = ${id} AND state IN ('ready', 'waiting')`);
  return (result.affected ?? 0) > 0;
}

/**
 * Deletes the `job_queue_keys` rows of these keys that no enqueue needs any more: no throttle
 * window open (none set, or ended by the database's clock). Such a row only serializes
 * enqueues of its key, and the next one re-creates it (lockKey's upsert); every decision reads
 * the holder from `jobs`, so a row's absence means exactly what a row without a window means.
 * Rows an enqueue holds right now are skipped (SKIP LOCKED: the sweep never waits for, nor
 * deadlocks with, an enqueue), and the window is tested on the locked row, so a throttle
 * window opened by an enqueue that committed a moment ago is seen and its row kept.
 * Returns the rows deleted. One statement of each kind, over at most `keys.length` rows.
 */
export async function deleteIdleKeyRows(tx: SqlExecutor, keys: readonly string[]): Promise<number> {
  if (!keys.length) return 0;
  const d = tx.dialect;
  const idle = sql`job_key IN (${sql.list([...keys])}) AND (window_ends_ms IS NULL OR window_ends_ms <= ${nowMs(tx)})`;
  if (d.name === 'sqlite') {
    // BEGIN IMMEDIATE: no enqueue runs meanwhile.
    return (await tx.run(sql`DELETE FROM job_queue_keys WHERE ${idle}`)).affected;
  }
  const { rows } = await tx.run(sql`SELECT job_key FROM job_queue_keys WHERE ${idle} FOR UPDATE SKIP LOCKED`);
  if (!rows.length) return 0;
  return (await tx.run(sql`DELETE FROM job_queue_keys WHERE job_key IN (${sql.list(rows.map((r) => String(r.job_key)))})`)).affected;
}

/**
 * The next `chunk` keys of `job_queue_keys` after `after` (in key order) that no job holds:
 * candidates for deleteIdleKeyRows, for rows whose holder went without taking its row along
 * (a throttle window still open when retention removed it, an enqueue holding the row then,
 * jobs deleted by hand). `next` is where the following chunk starts, null at the end. Reads
 * at most `chunk` key rows, whatever the table's size.
 */
export async function keysWithoutHolder(tx: SqlExecutor, after: string | null, chunk: number): Promise<{ keys: string[]; next: string | null }> {
  const from = after === null ? sql`` : sql` WHERE job_key > ${after}`;
  const { rows } = await tx.run(sql`SELECT job_key FROM job_queue_keys${from} ORDER BY job_key LIMIT ${chunk}`);
  const keys = rows.map((r) => String(r.job_key));
  if (!keys.length) return { keys, next: null };
  const held = await tx.run(sql`SELECT job_key FROM jobs WHERE job_key IN (${sql.list(keys)})`);
  const holders = new Set(held.rows.map((r) => String(r.job_key)));
  return { keys: keys.filter((k) => !holders.has(k)), next: keys.length < chunk ? null : keys[keys.length - 1] };
}

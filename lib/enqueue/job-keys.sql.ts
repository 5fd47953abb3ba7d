import { sql } from '../database/sql';
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
  const now =
    d === 'postgres'
      ? sql`(extract(epoch from clock_timestamp()) * 1000)::float8`
      : d === 'mysql'
        ? sql`TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) / 1000`
        : sql`(julianday('now') - 2440587.5) * 86400000.0`;
  const { rows } = await tx.run(sql`SELECT window_ends_ms, ${now} AS now_ms FROM job_queue_keys WHERE job_key = ${key}`);
  return { windowEndsMs: rows[0].window_ends_ms == null ? null : Number(rows[0].window_ends_ms), nowMs: Number(rows[0].now_ms) };
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

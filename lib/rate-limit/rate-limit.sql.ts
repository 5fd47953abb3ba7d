import { inLockOrder } from '../claim/lock-order';
import { chunked, sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobQueueRateLimits } from '../job-queue.options';
import { decodeWindow, encodeCounts, type RateWindowState } from './rate-window';

export function rateLimitName(kind: 'type' | 'group', key: string): string {
  return `${kind}:${key}`;
}

/** Every window row the configured rate limits need; created once at start-up. */
export function allRateLimitNames(rateLimits: Required<JobQueueRateLimits>): string[] {
  return [
    ...Object.keys(rateLimits.types).map((t) => rateLimitName('type', t)),
    ...Object.keys(rateLimits.groups).map((g) => rateLimitName('group', g)),
  ];
}

/** Inserts the rows that are missing: in bounded statements, in lock order (see ensureLimitRows). */
export async function ensureRateLimitRows(db: SqlExecutor, names: string[]): Promise<void> {
  for (const chunk of chunked(inLockOrder(names))) {
    const values = sql.join(chunk.map((n) => sql`(${n}, 0, '')`));
    const insert =
      db.dialect.name === 'postgres'
        ? sql`INSERT INTO job_queue_rate_limits (name, head, counts) VALUES ${values} ON CONFLICT DO NOTHING`
        : db.dialect.name === 'mysql'
          ? sql`INSERT IGNORE INTO job_queue_rate_limits (name, head, counts) VALUES ${values}`
          : sql`INSERT OR IGNORE INTO job_queue_rate_limits (name, head, counts) VALUES ${values}`;
    await db.run(insert);
  }
}

/**
 * Locks the window rows of these limits (in lock order, like the cap rows, so concurrent
 * claimers queue instead of deadlocking; SQLite's BEGIN IMMEDIATE already excludes every other
 * writer) and reads them, then the database's clock in milliseconds. The clock is read after
 * the lock is granted: a claimer that waited must not record its claims at the time it began
 * waiting, or they would leave the window early. Also returns this process's clock on either
 * side of that reading, which bound it on a host sharing the clock.
 */
export async function lockRateWindows(
  tx: SqlExecutor,
  names: string[],
): Promise<{ nowMs: number; windows: Map<string, RateWindowState>; localBeforeMs: number; localAfterMs: number }> {
  const lock = tx.dialect.name === 'sqlite' ? sql`` : sql` FOR UPDATE`;
  const windows = new Map<string, RateWindowState>();
  for (const chunk of chunked(inLockOrder(names))) {
    const { rows } = await tx.run(sql`SELECT name, head, counts FROM job_queue_rate_limits WHERE name IN (${sql.list(chunk)}) ORDER BY name${lock}`);
    for (const r of rows) windows.set(String(r.name), { head: Number(r.head), ...decodeWindow(r.counts) });
  }
  const clock =
    tx.dialect.name === 'postgres'
      ? sql`SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms`
      : tx.dialect.name === 'mysql'
        ? sql`SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) / 1000 AS now_ms`
        : sql`SELECT (julianday('now') - 2440587.5) * 86400000.0 AS now_ms`;
  // This process's clock just before and just after: the database read its own in between.
  const localBeforeMs = Date.now();
  const now = await tx.run(clock);
  return { nowMs: Number(now.rows[0].now_ms), windows, localBeforeMs, localAfterMs: Date.now() };
}

export async function saveRateWindow(tx: SqlExecutor, name: string, state: RateWindowState): Promise<void> {
  await tx.run(sql`UPDATE job_queue_rate_limits SET head = ${state.head}, counts = ${encodeCounts(state.counts, state.width)} WHERE name = ${name}`);
}

/** Dates the `started_at` of jobs a rate window admitted ahead of the claim at the moment it admitted them. */
export async function dateStarts(tx: SqlExecutor, ids: readonly number[], atMs: number): Promise<void> {
  const value = tx.dialect.timeParam(new Date(Math.floor(atMs)));
  const at = tx.dialect.name === 'postgres' ? sql`${value}::timestamptz` : sql`${value}`;
  await tx.run(sql`UPDATE jobs SET started_at = ${at} WHERE id IN (${sql.list(ids)})`);
}

import type { Dialect } from '../job-queue.options';

/**
 * Bound parameters one statement may carry: PostgreSQL and MySQL 65,535, SQLite 32,766
 * (SQLITE_MAX_VARIABLE_NUMBER since 3.32). PostgreSQL gets the ids as one array parameter, so
 * only statement size bounds it there.
 */
export const BIND_LIMITS: Readonly<Record<Dialect, number>> = { postgres: 65_535, mysql: 65_535, sqlite: 32_766 };

/**
 * Ids per waiter statement: well under every bind limit, and small enough that one statement
 * stays a few milliseconds on any dialect (a poll of 100,000 waiters is ten statements).
 */
export const WAITER_CHUNK = 10_000;

/** Splits `ids` into runs of at most `size` (size ≥ 1), in order. */
export function chunkIds(ids: readonly number[], size: number): number[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size must be a positive integer, got ${size}`);
  const out: number[][] = [];
  for (let i = 0; i < ids.length; i += size) out.push(ids.slice(i, i + size));
  return out;
}

/** The chunk size for `dialect`: WAITER_CHUNK, or less if the dialect allows fewer parameters. */
export function waiterChunkSize(dialect: Dialect, reserved = 0): number {
  return Math.max(1, Math.min(WAITER_CHUNK, BIND_LIMITS[dialect] - reserved));
}

import { MAX_BOUND_PARAMETERS } from '../database/sql';
import type { Dialect } from '../job-queue.options';

/**
 * Ids per waiter statement: well under every bind limit, and small enough that one statement
 * stays a few milliseconds on any dialect (a poll of 100,000 waiters is ten statements).
 * PostgreSQL gets the ids as one array parameter, so only statement size bounds it there.
 */
export const WAITER_CHUNK = 10_000;

/** The chunk size for `dialect`: WAITER_CHUNK, or less if the dialect allows fewer parameters. */
export function waiterChunkSize(dialect: Dialect, reserved = 0): number {
  return Math.max(1, Math.min(WAITER_CHUNK, MAX_BOUND_PARAMETERS[dialect] - reserved));
}

import { SQLITE_RETENTION_BATCH_BYTES } from './retention.sql';

/**
 * SQLite: how many rows a retention batch looks at. Reading a row's later columns (state, the
 * key) walks the overflow pages of the large values before them, so a batch that looked at 500
 * rows to remove the few that fit SQLITE_RETENTION_BATCH_BYTES walked all 500 (1,000 jobs of
 * 2 MB: 107 s, against 6 s in batches of 500). The first batch looks at a few rows; each next
 * one at as many as fit the budget at the last batch's mean size, up to `batchSize`.
 */
export const SQLITE_FIRST_RETENTION_LIMIT = 16;

export function firstRetentionLimit(sqlite: boolean, batchSize: number): number {
  return sqlite ? Math.min(batchSize, SQLITE_FIRST_RETENTION_LIMIT) : batchSize;
}

/** The next batch's limit after one that removed `removed` rows of `bytes` (0 bytes: not SQLite, or nothing large). */
export function nextRetentionLimit(batchSize: number, removed: number, bytes: number): number {
  if (removed <= 0) return batchSize;
  const mean = bytes / removed;
  return Math.max(1, Math.min(batchSize, Math.floor(SQLITE_RETENTION_BATCH_BYTES / Math.max(1, mean))));
}

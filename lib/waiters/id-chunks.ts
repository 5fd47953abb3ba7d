/**
 * Ids per waiter statement. Each chunk is bound as one parameter (see waiters.sql.ts), so no
 * bind limit applies; the size keeps one statement a few milliseconds on any dialect (a poll
 * of 100,000 waiters is ten statements) and its JSON text far under MySQL's packet limit.
 */
export const WAITER_CHUNK = 10_000;

/**
 * Bytes of args and results per read of settled rows (a row larger than that is read alone).
 * Waiters settling together were resolved from one read of up to WAITER_CHUNK whole rows: 300
 * jobs of 256 KB args were one 75 MB read, 10,000 of 1 MB results 10 GB.
 */
export const WAITER_READ_BYTES = 8 * 1024 * 1024;

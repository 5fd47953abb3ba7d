/**
 * Ids per waiter statement. Each chunk is bound as one parameter (see waiters.sql.ts), so no
 * bind limit applies; the size keeps one statement a few milliseconds on any dialect (a poll
 * of 100,000 waiters is ten statements) and its JSON text far under MySQL's packet limit.
 */
export const WAITER_CHUNK = 10_000;

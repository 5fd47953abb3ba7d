import { setTimeout as sleep } from 'node:timers/promises';
import { SqliteBusyError } from '../errors/sqlite.errors';
import { isSqliteBusy } from './db-errors';

/**
 * Waits out another process's SQLite write lock without blocking the event loop: each attempt
 * waits at most the connection's busy timeout, then backs off asynchronously. Past the deadline
 * the error says what usually holds the lock (no further retries: it is not a passing conflict).
 */
export async function retrySqliteBusy<T>(work: () => Promise<T>, deadlineMs = 60_000): Promise<T> {
  const start = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isSqliteBusy(err)) throw err;
      if (Date.now() - start > deadlineMs) throw new SqliteBusyError(Date.now() - start, err);
      await sleep(Math.random() * Math.min(250, 5 * 2 ** attempt));
    }
  }
}

import type { Completion } from './complete.sql';
import type { FailedAttempt } from './fail.sql';
import type { SnoozedAttempt } from './snooze.sql';

/** Of a database error quoted in `last_error`. */
const MAX_QUOTED_ERROR = 1_000;

/** The database's message, cut to a length that fits `last_error` with room to spare. */
export function quoteDbError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > MAX_QUOTED_ERROR ? `${message.slice(0, MAX_QUOTED_ERROR)}…` : message;
}

/**
 * What to write instead of an outcome the database refused on its own:
 * - a refused result or snooze fails the attempt, with the database's message (retried while attempts remain);
 * - a refused failure record is written again without the attempt's own error text, which may
 *   be what the database refused (a NUL byte on PostgreSQL), but with the database's message.
 */
export function failureForRefused(
  refused: { completion?: Completion; failure?: FailedAttempt; snooze?: SnoozedAttempt },
  err: unknown,
  retryDelayMs: number,
): FailedAttempt {
  if (refused.completion) {
    return { id: refused.completion.id, error: `the database refused the result of this attempt: ${quoteDbError(err)}`, retryDelayMs };
  }
  if (refused.snooze) {
    return { id: refused.snooze.id, error: `the database refused this attempt's snooze: ${quoteDbError(err)}`, retryDelayMs };
  }
  return { ...refused.failure!, error: `the database refused this attempt's error text: ${quoteDbError(err)}` };
}

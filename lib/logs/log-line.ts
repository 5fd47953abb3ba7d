import { sizedChunks } from '../database/sized-chunks';
import { storableText } from '../finalize/error-text';

/** The longest message stored; a longer one is cut (a log is for reading, not for payloads). */
export const MAX_LOG_MESSAGE_LENGTH = 2_000;

/**
 * Attempts of a run whose error becomes a log line: 1 to this (a `retry()` starts a run over at
 * 1). A job retried without end (a huge maxAttempts, polling something) would otherwise grow its
 * log by an error line per attempt for as long as it lives; past this, `lastError` has the latest.
 */
export const MAX_ERROR_LINES = 100;

/** A line as the handler gave it, waiting to be written. */
export interface PendingLogLine {
  attempt: number;
  at: Date;
  message: string;
}

/**
 * The text stored for a `ctx.log()` argument (pure): any value as `String()` gives it (never
 * throws: a value whose toString throws is logged by its tag), cut to MAX_LOG_MESSAGE_LENGTH
 * characters, NUL and unpaired surrogates replaced as in `lastError`.
 */
export function logMessageText(message: unknown): string {
  let text: string;
  try {
    text = typeof message === 'string' ? message : String(message);
  } catch {
    text = Object.prototype.toString.call(message);
  }
  return storableText(text, MAX_LOG_MESSAGE_LENGTH);
}

/** The last line of an attempt that reached `maxLogLines`; what it wrote after is not stored. */
export function logLimitNotice(maxLogLines: number): string {
  return `[log limit reached: maxLogLines is ${maxLogLines} lines per attempt; later lines of this attempt are not stored]`;
}

/**
 * Lines of one job cut into statements (pure): at most `maxLines` each, and about `maxChars`
 * characters of messages (a statement is one packet on MySQL/MariaDB; a line always goes).
 */
export function logStatements<T extends { message: string }>(lines: readonly T[], maxLines: number, maxChars: number): T[][] {
  return sizedChunks(lines, maxLines, maxChars, (line) => line.message.length);
}

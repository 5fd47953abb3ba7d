import { sql, type Sql } from '../database/sql';
import type { SqlDialect } from '../database/dialects/sql-dialect';
import { MAX_ERROR_LINES, MAX_LOG_MESSAGE_LENGTH } from './log-line';

/**
 * Each failed attempt's error as a line of its job's log (level `error`): `last_error` keeps
 * only the latest, the log keeps one per attempt. Copied from the row just written, in the
 * same transaction (`ids` are the jobs the guarded UPDATE changed), so the text is sent once
 * and a rolled-back failure leaves no line. Cut to a log line's length (code points here).
 * PostgreSQL's one-statement fail (`job_queue_fail`, migration 41) does the same inside.
 */
export function errorLinesStatement(d: SqlDialect, ids: readonly number[]): Sql {
  const cut = d.name === 'sqlite' ? sql`substr(last_error, 1, ${sql.raw(String(MAX_LOG_MESSAGE_LENGTH))})` : sql`left(last_error, ${sql.raw(String(MAX_LOG_MESSAGE_LENGTH))})`;
  return sql`INSERT INTO job_logs (job_id, attempt, logged_at, message, level)
    SELECT id, attempts, ${d.now()}, COALESCE(${cut}, ''), 'error' FROM jobs
    WHERE id IN (${sql.list(ids)}) AND attempts <= ${sql.raw(String(MAX_ERROR_LINES))} ORDER BY id`;
}

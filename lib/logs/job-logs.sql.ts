import { binarySlices } from '../database/binary-slices';
import { sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import type { SqlDialect } from '../database/dialects/sql-dialect';
import type { JobLogLevel } from './job-log.types';
import { logStatements, type PendingLogLine } from './log-line';

/** Lines per INSERT: 3 parameters each, far below every dialect's bind limit. */
const LINES_PER_STATEMENT = 500;
/** Characters of messages per INSERT (at most 4 bytes each, and MySQL escaping may double them). */
const CHARS_PER_STATEMENT = 1_000_000;

/**
 * Appends lines to a job's log, in order, if the job still exists: its rows are deleted with it
 * (deleteJobRows), and a late write must not leave lines behind that nothing removes.
 */
export async function insertLogLines(db: SqlExecutor, jobId: number, lines: readonly PendingLogLine[]): Promise<void> {
  const parts = logStatements(lines, LINES_PER_STATEMENT, CHARS_PER_STATEMENT);
  // SQLite compiles a statement per text: a few lengths (see binarySlices), not one per burst size.
  for (const part of db.dialect.name === 'sqlite' ? parts.flatMap((p) => binarySlices(p)) : parts) {
    await db.run(insertStatement(db.dialect, jobId, part));
  }
}

function insertStatement(d: SqlDialect, jobId: number, lines: readonly PendingLogLine[]): Sql {
  const exists = sql`EXISTS (SELECT 1 FROM jobs WHERE id = ${jobId})`;
  if (d.name === 'mysql') {
    const rows = sql.join(lines.map((l, i) => (i === 0
      ? sql`SELECT ${l.attempt} AS a, ${d.timeParam(l.at)} AS t, ${l.message} AS m`
      : sql`SELECT ${l.attempt}, ${d.timeParam(l.at)}, ${l.message}`)), ' UNION ALL ');
    return sql`INSERT INTO job_logs (job_id, attempt, logged_at, message) SELECT ${jobId}, v.a, v.t, v.m FROM (${rows}) v WHERE ${exists}`;
  }
  // PostgreSQL types the VALUES columns from their first row: cast there.
  const values = sql.join(lines.map((l) => (d.name === 'postgres'
    ? sql`(${l.attempt}::integer, ${d.timeParam(l.at)}::timestamptz, ${l.message}::text)`
    : sql`(${l.attempt}, ${d.timeParam(l.at)}, ${l.message})`)));
  return sql`INSERT INTO job_logs (job_id, attempt, logged_at, message) SELECT ${jobId}, v.column1, v.column2, v.column3 FROM (VALUES ${values}) v WHERE ${exists}`;
}

/**
 * Up to `limit` lines of a job written after line `afterId`, in the order written. By id, not by
 * attempt: a retry starts the attempts over at 1, and its lines come after the earlier ones.
 */
export async function readLogLines(db: SqlExecutor, jobId: number, attempt: number | null, level: JobLogLevel | null, afterId: number | null, limit: number): Promise<Row[]> {
  return (await db.run(logLinesStatement(db.dialect, jobId, attempt, level, afterId, limit))).rows;
}

export function logLinesStatement(d: SqlDialect, jobId: number, attempt: number | null, level: JobLogLevel | null, afterId: number | null, limit: number): Sql {
  const onlyAttempt = attempt === null ? sql`` : sql` AND attempt = ${attempt}`;
  // A literal, not a parameter: a plan made for any value (a generic or cached one) could not use
  // the partial index of the error lines (PostgreSQL 41, SQLite 23). `level` is one of
  // JOB_LOG_LEVELS, checked by the caller.
  const onlyLevel = level === null ? sql`` : sql` AND level = ${sql.raw(level === 'error' ? `'error'` : `'info'`)}`;
  const after = afterId === null ? sql`` : sql` AND id > ${afterId}`;
  return sql`SELECT id, attempt, ${d.selectTime('logged_at')} AS logged_at, level, message FROM job_logs
    WHERE job_id = ${jobId}${after}${onlyAttempt}${onlyLevel} ORDER BY id LIMIT ${limit}`;
}

export async function jobExists(db: SqlExecutor, jobId: number): Promise<boolean> {
  const { rows } = await db.run(sql`SELECT 1 AS found FROM jobs WHERE id = ${jobId}`);
  return rows.length > 0;
}

import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';
import { errorLinesStatement } from '../logs/error-lines.sql';
import { storableErrorText } from './error-text';
import { takeBatch } from './take-batch';
import { toSettled, type SettledJob } from './settled-job';

export interface FailedAttempt {
  id: number;
  error: string;
  /** Delay before the next attempt, if one is left. */
  retryDelayMs: number;
  /** Fail for good even if attempts are left (an unrecoverable error). */
  final?: boolean;
}

export interface FailOutcome {
  /** Back to `ready` with a later `run_after`. */
  retried: number[];
  /** Out of attempts: now `failed`, to be cascaded. */
  failed: SettledJob[];
}

/**
 * Records failed attempts: back to `ready` after a backoff while attempts remain, else
 * `failed`. `guard` selects the rows allowed to change (this worker's running job, or a
 * sweep's expired or overdue one), so a job is never failed twice for one attempt. Each attempt
 * written leaves its error as a line of the job's log (errorLinesStatement).
 *
 * One statement per slice of at most FAILS_PER_STATEMENT jobs and about FAIL_TEXT_PER_STATEMENT
 * characters of error text, each job's text and delay chosen by id: a statement per job made
 * failures 4-6x slower than completions (10,000 failing jobs: 3.9 s on PostgreSQL, 3.5 s on
 * MariaDB, against 0.6-0.9 s done), and a timeout sweep of 5,000 jobs 5,000 round trips.
 */
export async function failAttempts(tx: SqlExecutor, items: FailedAttempt[], guard: Sql): Promise<FailOutcome> {
  const out: FailOutcome = { retried: [], failed: [] };
  const d = tx.dialect;
  const now = d.now();
  const queue = [...items].sort((a, b) => a.id - b.id).map((item) => ({ ...item, error: storableErrorText(item.error) }));
  while (queue.length) {
    const slice = takeBatch(queue, FAILS_PER_STATEMENT, FAIL_TEXT_PER_STATEMENT, (item) => item.error.length);
    const finals = slice.filter((item) => item.final).map((item) => item.id);
    const retry = finals.length ? sql`(attempts < max_attempts AND id NOT IN (${sql.list(finals)}))` : sql`attempts < max_attempts`;
    const errors = sql.join(slice.map((item) => sql`WHEN ${item.id} THEN ${item.error}`), ' ');
    // Integers written as literals: PostgreSQL would type a CASE of bare parameters as text.
    const delays = sql.join(slice.map((item) => sql`WHEN ${item.id} THEN ${sql.raw(String(Math.max(0, Math.trunc(item.retryDelayMs))))}`), ' ');
    const rows = await updateReturning(
      tx,
      sql`state = CASE WHEN ${retry} THEN 'ready' ELSE 'failed' END,
        run_after = CASE WHEN ${retry} THEN ${d.addMs(now, sql`(CASE id ${delays} END)`)} ELSE run_after END,
        finished_at = CASE WHEN ${retry} THEN NULL ELSE ${now} END,
        last_error = CASE id ${errors} END,
        lease_owner = NULL, lease_expires = NULL, updated_at = ${now}`,
      sql`id IN (${sql.list(slice.map((item) => item.id))}) AND ${guard}`,
      sql`id, parent_id, attempts, max_attempts`,
    );
    if (rows.length) await tx.run(errorLinesStatement(d, rows.map((row) => Number(row.id))));
    const final = new Set(finals);
    for (const row of [...rows].sort((a, b) => Number(a.id) - Number(b.id))) {
      if (!final.has(Number(row.id)) && Number(row.attempts) < Number(row.max_attempts)) out.retried.push(Number(row.id));
      else out.failed.push(toSettled(row, 'failed'));
    }
  }
  return out;
}

/** Jobs per failing statement: three parameters each, far below every dialect's limit. */
const FAILS_PER_STATEMENT = 500;
/** Characters of error text per failing statement (each at most MAX_ERROR_LENGTH), well within MySQL's packet. */
const FAIL_TEXT_PER_STATEMENT = 1024 * 1024;

/**
 * PostgreSQL: this worker's failed attempts in one call of `job_queue_fail` (migration 37): one
 * round trip and one commit, the settled notification included. Rows: (`retried`, id) and
 * (`failed`, id) per job written, or one (`cascade`, NULL) when a job failed for good has
 * dependents or a container; then nothing was written and the caller takes the transactional
 * path (failAttempts, then the cascade).
 */
export function failInOneStatementPostgres(owner: string, items: FailedAttempt[], notify: boolean): Sql {
  const sorted = [...items].sort((a, b) => a.id - b.id);
  return sql`SELECT kind, job FROM job_queue_fail(${owner}, ${sorted.map((i) => i.id)}::bigint[],
    ${sorted.map((i) => storableErrorText(i.error))}::text[], ${sorted.map((i) => Math.max(0, Math.trunc(i.retryDelayMs)))}::float8[],
    ${sorted.map((i) => i.final === true)}::boolean[], ${notify})`;
}

import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';
import { storableErrorText } from './error-text';
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
 * Records a failed attempt: back to `ready` after a backoff while attempts remain, else
 * `failed`. `guard` selects the rows allowed to change (this worker's running job, or a
 * sweep's expired or overdue one), so a job is never failed twice for one attempt.
 */
export async function failAttempts(tx: SqlExecutor, items: FailedAttempt[], guard: Sql): Promise<FailOutcome> {
  const out: FailOutcome = { retried: [], failed: [] };
  const d = tx.dialect;
  const now = d.now();
  for (const item of [...items].sort((a, b) => a.id - b.id)) {
    const retry = item.final ? sql`0 = 1` : sql`attempts < max_attempts`;
    const rows = await updateReturning(
      tx,
      sql`state = CASE WHEN ${retry} THEN 'ready' ELSE 'failed' END,
        run_after = CASE WHEN ${retry} THEN ${d.addMs(now, item.retryDelayMs)} ELSE run_after END,
        finished_at = CASE WHEN ${retry} THEN NULL ELSE ${now} END,
        last_error = ${storableErrorText(item.error)},
        lease_owner = NULL, lease_expires = NULL, updated_at = ${now}`,
      sql`id = ${item.id} AND ${guard}`,
      sql`id, parent_id, attempts, max_attempts`,
    );
    for (const row of rows) {
      if (!item.final && Number(row.attempts) < Number(row.max_attempts)) out.retried.push(Number(row.id));
      else out.failed.push(toSettled(row, 'failed'));
    }
  }
  return out;
}

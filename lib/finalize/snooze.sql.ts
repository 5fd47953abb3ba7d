import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';

export interface SnoozedAttempt {
  id: number;
  /** Whole milliseconds from now until the job may run again (see snoozeDelayMs). */
  delayMs: number;
}

/** Jobs per snoozing statement: two parameters each, far below every dialect's limit. */
const SNOOZES_PER_STATEMENT = 500;

/**
 * Records snoozed attempts: back to `ready` after their delay, the attempt given back (the claim
 * counted it) and `snoozes` counted, `last_error` kept. `guard` selects the rows this worker
 * still runs, so a snooze from an attempt that lost its lease changes nothing. Returns the ids
 * written, in id order.
 */
export async function snoozeAttempts(tx: SqlExecutor, items: readonly SnoozedAttempt[], guard: Sql): Promise<number[]> {
  const d = tx.dialect;
  const now = d.now();
  const sorted = [...items].sort((a, b) => a.id - b.id);
  const written: number[] = [];
  for (let from = 0; from < sorted.length; from += SNOOZES_PER_STATEMENT) {
    const slice = sorted.slice(from, from + SNOOZES_PER_STATEMENT);
    // Integers written as literals: PostgreSQL would type a CASE of bare parameters as text.
    const delays = sql.join(slice.map((item) => sql`WHEN ${item.id} THEN ${sql.raw(String(Math.max(0, Math.trunc(item.delayMs))))}`), ' ');
    const rows = await updateReturning(
      tx,
      sql`state = 'ready', run_after = ${d.addMs(now, sql`(CASE id ${delays} END)`)}, attempts = attempts - 1,
        snoozes = snoozes + 1, lease_owner = NULL, lease_expires = NULL, updated_at = ${now}`,
      sql`id IN (${sql.list(slice.map((item) => item.id))}) AND ${guard}`,
      sql`id`,
    );
    for (const row of rows) written.push(Number(row.id));
  }
  return written.sort((a, b) => a - b);
}

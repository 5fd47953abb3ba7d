import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';

export type SavepointOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `work` behind a savepoint (SQLite and MySQL spell it the same), so that its failure
 * undoes only its own statements and the rest of the transaction can still commit: a finalize
 * must never fail because the claim it ends with did. When the savepoint itself is gone (MySQL
 * rolls the whole transaction back on a deadlock, a lost connection), the error is rethrown and
 * the transaction fails as it would have without the savepoint.
 */
export async function behindSavepoint<T>(tx: SqlExecutor, work: () => Promise<T>): Promise<SavepointOutcome<T>> {
  await tx.run(sql`SAVEPOINT job_queue_follow_up`);
  let value: T;
  try {
    value = await work();
  } catch (error) {
    try {
      await tx.run(sql`ROLLBACK TO SAVEPOINT job_queue_follow_up`);
      await tx.run(sql`RELEASE SAVEPOINT job_queue_follow_up`);
    } catch {
      throw error;
    }
    return { ok: false, error };
  }
  await tx.run(sql`RELEASE SAVEPOINT job_queue_follow_up`);
  return { ok: true, value };
}

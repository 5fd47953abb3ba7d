import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { cascade } from '../finalize/cascade.sql';
import { failAttempts } from '../finalize/fail.sql';
import { scopeFilter, type SweepResult, type SweepScope } from './sweep-result';

/**
 * Expired leases: the worker died or stopped renewing (a crash, a partition). The interrupted
 * attempt counts, so a job that kills its worker every time ends `failed` after `max_attempts`
 * instead of looping; otherwise it is `ready` again at once.
 * Rows are taken with SKIP LOCKED, so sweeps of several processes split the work; the guard
 * repeats the expiry test, so a lease renewed meanwhile is left alone.
 */
export async function reclaimExpiredLeases(tx: SqlExecutor, batch: number, scope?: SweepScope): Promise<SweepResult> {
  const d = tx.dialect;
  const expired = expiredLease(tx);
  const { rows } = await tx.run(sql`SELECT id, lease_owner, attempts, max_attempts FROM jobs WHERE ${expired}${scopeFilter(scope)}
    ORDER BY id LIMIT ${batch}${d.name === 'sqlite' ? sql`` : sql` FOR UPDATE SKIP LOCKED`}`);
  if (!rows.length) return { retried: [], settled: [], promoted: 0 };
  const outcome = await failAttempts(
    tx,
    rows.map((r) => ({
      id: Number(r.id),
      error: `lease expired: worker ${String(r.lease_owner)} stopped renewing it during attempt ${r.attempts}/${r.max_attempts}`,
      retryDelayMs: 0,
    })),
    expired,
  );
  const result = await cascade(tx, outcome.failed);
  return { retried: outcome.retried, settled: result.settled, promoted: result.promoted };
}

/** The rows a reclaim run would take next, read without locks (to isolate one the database refuses). */
export async function expiredLeaseIds(tx: SqlExecutor, batch: number, scope: SweepScope): Promise<number[]> {
  const { rows } = await tx.run(sql`SELECT id FROM jobs WHERE ${expiredLease(tx)}${scopeFilter(scope)} ORDER BY id LIMIT ${batch}`);
  return rows.map((r) => Number(r.id));
}

function expiredLease(tx: SqlExecutor) {
  return sql`state IN ('leased', 'running') AND lease_expires < ${tx.dialect.now()}`;
}

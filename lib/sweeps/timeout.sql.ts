import type { RetryBackoffOptions } from '../job-queue.options';
import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { cascade } from '../finalize/cascade.sql';
import { failAttempts } from '../finalize/fail.sql';
import { retryDelayMs } from '../scheduler/retry-backoff';
import { scopeFilter, type SweepResult, type SweepScope } from './sweep-result';

/**
 * Jobs running past `started_at + timeout_ms`, whoever holds them: this catches a worker that
 * is alive but wedged (a blocked event loop keeps renewing nothing, but its lease may not
 * have expired yet, and its own timer cannot fire). The attempt fails; the worker, if it ever
 * wakes, finds its lease gone and its result refused.
 */
export async function failOverdueJobs(
  tx: SqlExecutor,
  batch: number,
  backoff: Required<RetryBackoffOptions>,
  scope?: SweepScope,
): Promise<SweepResult> {
  const d = tx.dialect;
  const overdue = overdueJobs(tx);
  const { rows } = await tx.run(sql`SELECT id, lease_owner, attempts, timeout_ms FROM jobs WHERE ${overdue}${scopeFilter(scope)}
    ORDER BY id LIMIT ${batch}${d.name === 'sqlite' ? sql`` : sql` FOR UPDATE SKIP LOCKED`}`);
  const retried: number[] = [];
  const failed = [];
  // One failAttempts per worker, whose lease the guard checks: a statement per job took 3.6 s
  // for 5,000 jobs of a wedged worker on PostgreSQL.
  const byOwner = new Map<string, typeof rows>();
  for (const r of rows) {
    const owner = String(r.lease_owner);
    const list = byOwner.get(owner);
    if (list) list.push(r);
    else byOwner.set(owner, [r]);
  }
  for (const [owner, list] of byOwner) {
    const outcome = await failAttempts(
      tx,
      list.map((r) => ({
        id: Number(r.id),
        error: `timed out after ${r.timeout_ms} ms (found by the timeout sweep; worker ${owner} did not finish it)`,
        retryDelayMs: retryDelayMs(Number(r.attempts), backoff),
      })),
      sql`${overdue} AND lease_owner = ${owner}`,
    );
    retried.push(...outcome.retried);
    failed.push(...outcome.failed);
  }
  const result = await cascade(tx, failed);
  return { retried, settled: result.settled, promoted: result.promoted };
}

/** The rows a timeout run would take next, read without locks (to isolate one the database refuses). */
export async function overdueJobIds(tx: SqlExecutor, batch: number, scope: SweepScope): Promise<number[]> {
  const { rows } = await tx.run(sql`SELECT id FROM jobs WHERE ${overdueJobs(tx)}${scopeFilter(scope)} ORDER BY id LIMIT ${batch}`);
  return rows.map((r) => Number(r.id));
}

function overdueJobs(tx: SqlExecutor) {
  return sql`state IN ('leased', 'running') AND state = 'running' AND timeout_ms IS NOT NULL
    AND ${tx.dialect.addMs(sql`started_at`, sql`timeout_ms`)} < ${tx.dialect.now()}`;
}

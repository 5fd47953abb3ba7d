import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';

export const NOTIFY_CHANNEL = 'nestjs_sql_job_queue';

/**
 * Payload: comma-separated ids of jobs that have just become done, failed or cancelled. Sent by
 * the batched complete at its commit and, for every other path, by the process that committed
 * it (SettledNotifier); heard by the processes that have a `waitFor` pending.
 */
export const SETTLED_CHANNEL = 'nestjs_sql_job_queue_settled';

/**
 * Payloads: `r` = ready work exists; `c:<id>` = job <id> was cancelled while it may be running;
 * `p` = the paused types or groups changed.
 */
export type NotifyPayload = 'r' | 'p' | `c:${number}`;

/**
 * PostgreSQL only: NOTIFY inside the caller's transaction, delivered to listeners when (and
 * only if) it commits. PostgreSQL folds identical notifications of one transaction into one.
 */
export async function notifyInTransaction(tx: SqlExecutor, payload: NotifyPayload): Promise<void> {
  if (tx.dialect.name !== 'postgres') return;
  await tx.run(sql`SELECT pg_notify(${NOTIFY_CHANNEL}, ${payload})`);
}

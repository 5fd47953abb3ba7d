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
 * Payloads: `r` = ready work exists; `r:<worker id>` = the same, from a complete that ended
 * with that worker's claim (it took what it could, so it ignores its own); `c:<id>` = job <id>
 * was cancelled while it may be running; `p` = the paused types or groups changed.
 */
export type NotifyPayload = 'r' | 'p' | `c:${number}` | `r:${string}`;

/** The ready wake sent by `owner`'s complete that ended with its own claim. */
export function readyPayloadOf(owner: string): NotifyPayload {
  return `r:${owner}`;
}

/** Whether a payload announces ready work to the worker `self`: every ready wake but its own. */
export function announcesReadyTo(payload: string, self: string): boolean {
  return payload === 'r' || (payload.startsWith('r:') && payload.slice(2) !== self);
}

/**
 * PostgreSQL only: NOTIFY inside the caller's transaction, delivered to listeners when (and
 * only if) it commits. PostgreSQL folds identical notifications of one transaction into one.
 */
export async function notifyInTransaction(tx: SqlExecutor, payload: NotifyPayload): Promise<void> {
  if (tx.dialect.name !== 'postgres') return;
  await tx.run(sql`SELECT pg_notify(${NOTIFY_CHANNEL}, ${payload})`);
}

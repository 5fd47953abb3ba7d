import { JobQueueError } from './job-queue.error';

const MANAGER_HINT =
  'If this enqueue runs inside your own open TypeORM transaction on the same SQLite file, pass that ' +
  "transaction's manager (`queue.enqueue(job, { manager })`) so the insert joins it, or enqueue after it commits.";

/**
 * The SQLite file stayed locked by another connection past the wait. On a file shared with the
 * application, the usual cause is an enqueue awaited inside the app's own open transaction.
 */
export class SqliteBusyError extends JobQueueError {
  readonly code = 'SQLITE_BUSY';
  constructor(
    readonly waitedMs: number,
    override readonly cause: unknown,
  ) {
    super(
      `The SQLite database stayed locked by another connection for ${Math.round(waitedMs / 1000)} s ` +
        `(${(cause as Error)?.message ?? String(cause)}). ${MANAGER_HINT} Otherwise another process holds a long write transaction.`,
    );
  }
}

/**
 * `enqueue`/`enqueueGraph` without `{ manager }` while the application's DataSource (passed as
 * `dataSource`) has a transaction open on the same SQLite file: the queue's own connection could
 * only write after it commits, and it never would if the caller awaits the enqueue inside it.
 */
export class AppTransactionOpenError extends JobQueueError {
  readonly code = 'APP_TRANSACTION_OPEN';
  constructor(readonly waitedMs: number) {
    super(
      `The application's DataSource has a transaction open on this SQLite file (still open after ${waitedMs} ms), ` +
        `so the queue cannot write. ${MANAGER_HINT}`,
    );
  }
}

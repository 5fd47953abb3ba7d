import { JobQueueError } from './job-queue.error';

/**
 * The database did not answer one of the queue's statements within `queryTimeoutMs`. The queue
 * closed that connection (its pool opens a new one) and treats the statement like one on a lost
 * connection: whether a write in it took effect is unknown, and the worker's own claims,
 * renewals and finalizes are retried. A server that hangs, or a connection left half-open by a
 * failover or a network that drops its packets, answers nothing until TCP gives up (minutes).
 */
export class DatabaseNoAnswerError extends JobQueueError {
  readonly code = 'DATABASE_NO_ANSWER';

  constructor(readonly timeoutMs: number) {
    super(`The database did not answer within ${timeoutMs} ms (queryTimeoutMs); the connection was closed and a new one will be opened.`);
  }
}

/**
 * Start-up could not open the queue's database: the server refused or never answered, or it
 * turned the login or the database down. The message says where it tried (never the user or
 * password) and what the driver said; `cause` is the driver's error, with its own `code`.
 */
export class DatabaseConnectionError extends JobQueueError {
  readonly code = 'DATABASE_CONNECTION_FAILED';

  constructor(
    readonly target: string,
    cause: unknown,
    /** Set when the server never answered the handshake: the deadline that gave it up. */
    unansweredMs?: number,
  ) {
    // Not instanceof Error: a driver's error may come from another realm (a Jest vm context).
    const message = (cause as { message?: unknown } | null | undefined)?.message;
    const said = typeof message === 'string' ? message : String(cause);
    const why = unansweredMs !== undefined ? ` (no answer within ${unansweredMs} ms: queryTimeoutMs, at most 10 s, bounds a new connection's handshake)` : '';
    super(`Could not ${target.startsWith('the SQLite') ? 'open' : 'connect to'} ${target}: ${said}${why}.`, { cause });
  }
}

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

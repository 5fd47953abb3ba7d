import { JobQueueError } from './job-queue.error';
import { describeValue } from './options.errors';

/** A `find`, `findSchedules` or `findPaused` filter or option, a `stats` option, or the filter of `retryMany`/`cancelMany` is invalid. Nothing was read or changed. */
export class InvalidQueryError extends JobQueueError {
  readonly code: string = 'INVALID_QUERY';

  constructor(
    readonly field: string,
    readonly expected: string,
    readonly received: unknown,
  ) {
    super(`Query: "${field}" must be ${expected}; received ${describeValue(received)}.`);
  }
}

/** A cursor was not issued by `find`, `findSchedules` or `findPaused`, was altered, or belongs to a different filter. */
export class InvalidCursorError extends InvalidQueryError {
  override readonly code: string = 'INVALID_CURSOR';

  constructor(
    received: unknown,
    readonly reason: string,
  ) {
    super('cursor', `the nextCursor of a previous page (find, findSchedules, findPaused) with the same filter (${reason})`, received);
  }
}

/** `pause`/`resume` need exactly one of `{ type }` or `{ group }`, a non-empty string. Nothing was changed. */
export class InvalidPauseTargetError extends JobQueueError {
  readonly code = 'INVALID_PAUSE_TARGET';

  constructor(readonly received: unknown, detail: string) {
    super(`pause/resume: ${detail}; pass { type: 'email' } or { group: 'acme' }.`);
  }
}

import { JobQueueError } from '../errors/job-queue.error';

/** Two `@JobHandler` methods declare the same type; raised at bootstrap. */
export class DuplicateJobHandlerError extends JobQueueError {
  readonly code = 'DUPLICATE_JOB_HANDLER';
  constructor(
    readonly type: string,
    readonly first: string,
    readonly second: string,
  ) {
    super(`@JobHandler('${type}') is declared twice: on ${first} and on ${second}. Each job type has one handler.`);
  }
}

/** A `@JobHandler` has an invalid type or option; raised at bootstrap. */
export class InvalidJobHandlerError extends JobQueueError {
  readonly code = 'INVALID_JOB_HANDLER';
  constructor(
    readonly where: string,
    detail: string,
  ) {
    super(`@JobHandler on ${where}: ${detail}`);
  }
}

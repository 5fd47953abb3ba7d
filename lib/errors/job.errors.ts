import { JobQueueError } from './job-queue.error';
import { describeValue } from './options.errors';

/** A field of an enqueued job is invalid (type, group, priority, args, ...). Nothing was written. */
export class InvalidJobError extends JobQueueError {
  readonly code: string = 'INVALID_JOB';

  constructor(
    readonly field: string,
    readonly expected: string,
    readonly received: unknown,
    readonly ref?: string,
  ) {
    super(`Job${ref === undefined ? '' : ` "${ref}"`}: "${field}" must be ${expected}; received ${describeValue(received)}.`);
  }
}

/** `args` holds something JSON cannot carry faithfully (a function, a BigInt, a symbol, a cycle). */
export class ArgsNotSerializableError extends JobQueueError {
  readonly code = 'ARGS_NOT_SERIALIZABLE';

  constructor(
    readonly path: string,
    readonly reason: string,
    readonly ref?: string,
  ) {
    super(
      `Job${ref === undefined ? '' : ` "${ref}"`}: args${path} ${reason}; args are stored as JSON, ` +
        `so pass plain data (convert BigInt to string, drop functions and cycles).`,
    );
  }
}

/** Serialized `args` exceed the `maxArgsBytes` option. */
export class ArgsTooLargeError extends JobQueueError {
  readonly code = 'ARGS_TOO_LARGE';

  constructor(
    readonly bytes: number,
    readonly limit: number,
    readonly ref?: string,
  ) {
    super(
      `Job${ref === undefined ? '' : ` "${ref}"`}: args serialize to ${bytes} bytes, over the ${limit}-byte limit ` +
        `(option maxArgsBytes). Store large payloads elsewhere and pass a reference.`,
    );
  }
}

/**
 * A handler returned a result whose JSON exceeds the `maxResultBytes` option. The attempt fails
 * for good (no retry: the same work would return the same result) and nothing is stored.
 */
export class ResultTooLargeError extends JobQueueError {
  readonly code = 'RESULT_TOO_LARGE';

  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `the handler's result serializes to ${bytes} bytes, over the ${limit}-byte limit (option maxResultBytes). ` +
        `Store large results elsewhere (object storage, a table of your own) and return a reference to them.`,
    );
  }
}

/** No `@JobHandler` is registered for this type and it is not declared in `externalTypes`. */
export class UnknownJobTypeError extends JobQueueError {
  readonly code = 'UNKNOWN_JOB_TYPE';

  constructor(
    readonly type: string,
    readonly known: readonly string[],
  ) {
    super(
      `No @JobHandler('${type}') is registered` +
        (known.length ? ` (registered: ${known.map((t) => `'${t}'`).join(', ')})` : '') +
        `. Fix the type, add the handler, or list types handled by other processes in the "externalTypes" option.`,
    );
  }
}

/** No job has this id (never existed, or removed by retention). */
export class JobNotFoundError extends JobQueueError {
  readonly code = 'JOB_NOT_FOUND';

  constructor(readonly id: number) {
    super(`Job ${id} does not exist (it may have been removed by the retention sweep).`);
  }
}

/** `cancel`/`retry`/`remove`/`runNow` on a job whose state does not allow it (e.g. retrying a job that is done). */
export class InvalidJobStateError extends JobQueueError {
  readonly code = 'INVALID_JOB_STATE';

  constructor(
    readonly id: number,
    readonly state: string,
    readonly operation: string,
    readonly allowed: readonly string[],
  ) {
    super(`Cannot ${operation} job ${id}: it is ${state}; only ${allowed.join(' or ')} jobs can be ${pastTense(operation)}.`);
  }
}

function pastTense(operation: string): string {
  if (operation === 'retry') return 'retried';
  if (operation === 'runNow') return 'run now';
  return operation.endsWith('e') ? `${operation}d` : `${operation}ed`;
}

/**
 * `remove(id)` of a finished job that unfinished work is still tied to: a dependent that may read
 * its result, an upstream still running, its open container, or its key's open throttle window.
 * Nothing was removed; the job can be removed once that work has finished (or been cancelled).
 */
export class JobStillNeededError extends JobQueueError {
  readonly code = 'JOB_STILL_NEEDED';

  constructor(readonly id: number) {
    super(
      `Cannot remove job ${id}: unfinished work is still tied to it (a dependent that may read its result, ` +
        `an upstream still running, its open container, or its key's open throttle window). Remove it once that work has finished or been cancelled.`,
    );
  }
}

/** `waitFor` gave up before the job finished. The job itself is unaffected. */
export class WaitForTimeoutError extends JobQueueError {
  readonly code = 'WAIT_FOR_TIMEOUT';

  constructor(
    readonly id: number,
    readonly timeoutMs: number,
    readonly lastState: string,
  ) {
    super(`Job ${id} did not finish within ${timeoutMs} ms (it is ${lastState}); the job keeps running.`);
  }
}

/**
 * An enqueue with keys lost a race: another transaction inserted a job with one of its keys and
 * committed while this one was writing. Inside your own transaction (`{ manager }`) the queue
 * cannot retry for you (on PostgreSQL the transaction is aborted); run it again, and the enqueue
 * returns the job that exists. `cause` is the database's unique violation.
 */
export class KeyConflictError extends JobQueueError {
  readonly code = 'KEY_CONFLICT';

  constructor(
    readonly keys: readonly string[],
    override readonly cause: unknown,
  ) {
    const named = keys.slice(0, 3).map((k) => JSON.stringify(k)).join(', ') + (keys.length > 3 ? ` (or one of ${keys.length - 3} more)` : '');
    super(
      `A job with key ${named} was enqueued by a concurrent transaction that committed first. ` +
        `Run your transaction again: the enqueue then returns the existing job.`,
    );
  }
}

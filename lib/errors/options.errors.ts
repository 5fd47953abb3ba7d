import { JobQueueError } from './job-queue.error';

/** A module option is missing, of the wrong type, or out of range. Raised at start-up. */
export class InvalidOptionError extends JobQueueError {
  readonly code = 'INVALID_OPTION';

  constructor(
    readonly option: string,
    readonly expected: string,
    readonly received: unknown,
  ) {
    super(`JobQueueModule option "${option}" must be ${expected}; received ${describeValue(received)}.`);
  }
}

/** The database server is older than the features the claim relies on. */
export class UnsupportedDatabaseError extends JobQueueError {
  readonly code = 'UNSUPPORTED_DATABASE';

  constructor(
    readonly server: string,
    readonly minimum: string,
  ) {
    super(
      `${server} is not supported: nestjs-sql-job-queue needs ${minimum} ` +
        `(FOR UPDATE SKIP LOCKED, RETURNING). Upgrade the server or use another dialect.`,
    );
  }
}

export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return `Date(${isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString()})`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

import { SetMetadata } from '@nestjs/common';
import { JOB_HANDLER_METADATA } from '../job-queue.constants';
import type { StandardSchemaV1 } from '../typing/standard-schema';
import type { JobArgs, JobTypeName } from '../typing/job-types';
import type { JobHandlerMethod } from '../typing/handler-types';

export interface JobHandlerOptions<T extends string = string> {
  /** Per-attempt timeout for jobs of this type (unless the job sets its own). */
  timeoutMs?: number;
  /** Attempts for jobs of this type (unless the job sets its own). */
  maxAttempts?: number;
  /** At most this many jobs of this type at once in this process. */
  concurrency?: number;
  /**
   * A Standard Schema v1 validator (zod, valibot, arktype, ...) for `args`: `enqueue` and
   * `enqueueGraph` in a process that has this handler reject invalid args (`JobArgsInvalidError`,
   * nothing written), and the worker checks again before running (a failure fails the job for good).
   */
  schema?: StandardSchemaV1<unknown, JobArgs<T>>;
}

export interface JobHandlerMetadata {
  type: string;
  options: JobHandlerOptions;
}

/** A method decorator that checks the method against the job type's declared args and result. */
export type JobHandlerDecorator<T extends string> = <M extends JobHandlerMethod<T>>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Marks a provider method as the handler of a job type:
 * `async (args, ctx: JobContext) => result`. The result is stored as JSON with `done`.
 * With `JobTypes` augmented, the method's parameter and return types are checked against it.
 */
export function JobHandler<T extends JobTypeName>(type: T, options: JobHandlerOptions<T> = {}): JobHandlerDecorator<T> {
  return SetMetadata<string, JobHandlerMetadata>(JOB_HANDLER_METADATA, { type, options: options as unknown as JobHandlerOptions }) as JobHandlerDecorator<T>;
}

import type { JobContext } from '../handlers/job-context';
import type { JobArgs, JobResult, JobTypesDeclared } from './job-types';

/**
 * The shape a `@JobHandler(type)` method must have: loose (any args, any result) until
 * `JobTypes` is augmented, then `(args: JobArgs<T>, ctx: JobContext<T>) => JobResult<T>`.
 */
export type JobHandlerMethod<T extends string> = JobTypesDeclared extends true
  ? (args: JobArgs<T>, ctx: JobContext<T>) => JobResult<T> | Promise<JobResult<T>>
  : // eslint-disable-next-line @typescript-eslint/no-explicit-any
    (args: any, ctx: any) => unknown;

import type { GraphNode, JobOptions, JobView } from '../job.types';

/**
 * The job types of your application, for type checking. Empty here; augment it once in your app:
 *
 * ```ts
 * declare module 'nestjs-sql-job-queue' {
 *   interface JobTypes {
 *     fetch: { args: { url: string }; result: { html: string } };
 *     render: { args: { reportId: string }; result: { url: string }; upstream: { fetch: 'fetch' } };
 *   }
 * }
 * ```
 *
 * Then `enqueue`, `enqueueGraph`, `@JobHandler`, `get`, `waitFor` and `ctx.upstream()` check against
 * it, and a type that is not declared is a compile error. Without any augmentation everything
 * stays loose (`type: string`, `args: unknown`). `upstream` maps the graph refs of a job's
 * upstreams to their job types, so `ctx.upstream()` returns their typed results.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface, @typescript-eslint/no-empty-object-type
export interface JobTypes {}

/** True once the application has augmented `JobTypes`. */
export type JobTypesDeclared = [keyof JobTypes] extends [never] ? false : true;

/** The job type names the compiler accepts: the declared ones, or any string without augmentation. */
export type JobTypeName = JobTypesDeclared extends true ? keyof JobTypes & string : string;

/** `args` of a declared type; `unknown` for anything else. */
export type JobArgs<T extends string> = T extends keyof JobTypes
  ? 'args' extends keyof JobTypes[T]
    ? JobTypes[T]['args' & keyof JobTypes[T]]
    : undefined
  : unknown;

/** `result` of a declared type; `unknown` for anything else. */
export type JobResult<T extends string> = T extends keyof JobTypes
  ? 'result' extends keyof JobTypes[T]
    ? JobTypes[T]['result' & keyof JobTypes[T]]
    : unknown
  : unknown;

/** What `ctx.upstream()` resolves to in a handler of type `T`. */
export type JobUpstream<T extends string> = T extends keyof JobTypes
  ? JobTypes[T] extends { upstream: infer U }
    ? { [R in keyof U]: U[R] extends string ? JobResult<U[R]> : unknown }
    : Record<string, unknown>
  : Record<string, unknown>;

/** `args` is required when the declared type needs it, optional when it accepts `undefined`. */
type ArgsField<T extends string> = T extends keyof JobTypes
  ? undefined extends JobArgs<T>
    ? { args?: JobArgs<T> }
    : { args: JobArgs<T> }
  : { args?: unknown };

/** `enqueue`'s input for job type `T`. */
export type TypedEnqueueInput<T extends string> = JobOptions & { type: T } & ArgsField<T>;

/**
 * One node of `enqueueGraph`: for declared types a union over them, so each node's `args` is
 * checked against its own `type`; otherwise the loose `GraphNode`.
 */
export type TypedGraphNode = JobTypesDeclared extends true
  ? { [K in JobTypeName]: Omit<GraphNode, 'type' | 'args'> & { type: K } & ArgsField<K> }[JobTypeName]
  : GraphNode;

/** The job view of type `T`; for the union of declared types, one view per type (narrow on `job.type`). */
export type TypedJobView<T extends string> = JobTypesDeclared extends true
  ? T extends keyof JobTypes
    ? JobView<JobArgs<T>, JobResult<T>> & { type: T }
    : never
  : JobView;

/**
 * The explicit-generics forms of before typed payloads (`enqueue<Args, Result>(...)`) stay
 * available until `JobTypes` is augmented; after that they would bypass its checks, so they close.
 */
export type LooseOnly<T> = JobTypesDeclared extends true ? never : T;

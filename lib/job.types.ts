import type { Dependency } from './graph/validate-graph';
import type { EntityManager } from 'typeorm';

/**
 * `waiting` (dependencies or children open) → `ready` → `leased`/`running` → `done` | `failed` | `cancelled`.
 * Only `ready` rows are claimable.
 */
export type JobState = 'waiting' | 'ready' | 'leased' | 'running' | 'done' | 'failed' | 'cancelled';

/** The states a job never leaves on its own: `done`, `failed`, `cancelled` (only `retry()` reopens the last two). */
export const TERMINAL_STATES: readonly JobState[] = ['done', 'failed', 'cancelled'];

/** Every state, in lifecycle order. */
export const JOB_STATES: readonly JobState[] = ['waiting', 'ready', 'leased', 'running', 'done', 'failed', 'cancelled'];

/** A job as stored, with camelCase fields and parsed JSON. Returned by `get`, `enqueue` and `waitFor`. */
export interface JobView<TArgs = unknown, TResult = unknown> {
  id: number;
  type: string;
  /** The graph ref the job was enqueued under, or null. */
  ref: string | null;
  state: JobState;
  args: TArgs;
  result: TResult | null;
  /** Attempts spent (a snoozed run gives its attempt back). */
  attempts: number;
  maxAttempts: number;
  /** Times a handler snoozed the job (`ctx.snooze`): runs that spent no attempt. */
  snoozes: number;
  lastError: string | null;
  /** 0–100, as last reported by `ctx.progress`. */
  progress: number;
  currentStage: string | null;
  group: string;
  weight: number;
  priority: number;
  parentId: number | null;
  /** True for a container: a job with children that never runs a handler and rolls up from them. */
  isContainer: boolean;
  key: string | null;
  timeoutMs: number | null;
  runAfter: Date;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  updatedAt: Date;
}

/** Scheduling options shared by `enqueue` and graph nodes. */
export interface JobOptions {
  /** Fair-share group (e.g. a tenant). Default `'default'`. */
  group?: string;
  /** Fair-share weight of the job's group, a positive integer. Default 1 (or the `groups` option). */
  weight?: number;
  /** Higher runs first within its group. A non-negative integer, default 0. */
  priority?: number;
  /** Not claimable before this time. */
  runAfter?: Date;
  /** Attempts before the job fails for good. Default: the handler's `maxAttempts`, else `defaultMaxAttempts`. */
  maxAttempts?: number;
  /** Per-attempt timeout. Default: the handler's `timeoutMs`, else `defaultTimeoutMs`. */
  timeoutMs?: number;
  /** Deduplication key: enqueueing an existing key returns the existing job instead of a new one. */
  key?: string;
  /**
   * How `key` dedupes (single `enqueue` only; graph nodes use 'forever'):
   * - `'forever'` (default): one job per key for good;
   * - `'unfinished'`: one job per key while it is not finished (waiting, ready, running);
   * - `'debounce'`: the job runs `debounceMs` after the latest enqueue; an enqueue before it is
   *   claimed replaces its args and pushes its `runAfter` back;
   * - `'throttle'`: at most one job per key per `throttleMs` window; enqueues inside it return that job.
   */
  keyMode?: 'forever' | 'unfinished' | 'debounce' | 'throttle';
  /** With `keyMode: 'debounce'`: the quiet period after the latest enqueue, in ms. */
  debounceMs?: number;
  /** With `keyMode: 'throttle'`: the window, in ms. */
  throttleMs?: number;
}

export interface EnqueueInput<TArgs = unknown> extends JobOptions {
  type: string;
  args?: TArgs;
}

/**
 * One node of `enqueueGraph`. `dependsOn` lists refs of this graph, or ids of existing jobs, each
 * needing to succeed; `{ job, allowFailure: true }` names one whose failure or cancellation does
 * not cancel this node: it runs once that upstream finishes, however it finished.
 */
export interface GraphNode<TArgs = unknown> extends EnqueueInput<TArgs> {
  ref: string;
  dependsOn?: ReadonlyArray<Dependency>;
  /** Ref of the container node this node belongs to. */
  parent?: string;
}

export interface EnqueueOptions {
  /**
   * Run the inserts inside this TypeORM transaction (the app's own), so the jobs exist only if it
   * commits. Needs the queue to share the app's database (`dataSource` option, or the same URL).
   */
  manager?: EntityManager;
}

/** `{ [ref]: id }` for every node of the graph, including nodes matched by key. */
export type GraphIds<TRef extends string = string> = Record<TRef, number>;

import type { JobQueueLimits, JobQueueRateLimits } from '../job-queue.options';
import type { LimitRoom } from './within-limits';

/** How many ready jobs to take, from one group or from any. */
export interface ClaimQuota {
  /** Only this group; omitted = any group. */
  group?: string;
  limit: number;
}

export interface ClaimRequest {
  /** Written into `lease_owner`; finalize and heartbeats are guarded by it. */
  owner: string;
  /** Only jobs of these types (the ones the caller has handlers for). */
  types: readonly string[];
  quotas: readonly ClaimQuota[];
  /**
   * Slots to fill from the groups that follow the fair-share rotation cursor (see rotationCursor),
   * by weighted round-robin (used when there are more ready groups than slots).
   */
  rotation?: number;
  /**
   * The rotation cursor to follow: a worker's is rotationCursorName of every type it handles,
   * computed once, so that a type paused or at its cap (left out of `types`) does not switch it
   * to another cursor. Default: the cursor of `types`.
   */
  rotationCursor?: string;
  /** Group weights that override the `weight` stored with the jobs (for `rotation`). */
  groupWeights?: Record<string, number>;
  leaseTtlMs: number;
  /**
   * The caller dispatches the jobs at once: write `running` and `started_at` in the claim
   * itself, sparing a second update per job. Otherwise the rows are `leased`.
   */
  start?: boolean;
  /** Cluster-wide caps on jobs in flight, counted in the database under a lock per cap. */
  limits?: JobQueueLimits;
  /** Cluster-wide starts per time window, counted in a window row per limit, locked like the caps. */
  rateLimits?: JobQueueRateLimits;
  /**
   * Called when a rate limit of this claim is exhausted, with the milliseconds until a claim
   * could be admitted again (its window's reopening, less the lookahead), so the worker claims
   * then rather than at its next poll.
   */
  onRateLimited?: (claimAgainInMs: number) => void;
  /**
   * Set by the claim itself under rate limits: the database time (epoch ms) at which the rate
   * windows admitted this claim, written as the jobs' `started_at`, so that a job's start is
   * dated where its window counted it.
   */
  admittedAtMs?: number;
  /** This process's own remaining room (e.g. a handler's `concurrency`). */
  room?: LimitRoom;
  /** Paused groups (`pause({ group })`): never claimed, whatever the quota. */
  excludeGroups?: readonly string[];
  /** Groups at their `limits` cap (set by the claim itself): never claimed by this request. Few: the options name them. */
  fullGroups?: readonly string[];
  /**
   * Tracing only (an instrumentation is registered): the claim returns each job's stored trace
   * context with its row, where the statement returns rows anyway (see ClaimedJob.creation).
   */
  withTrace?: boolean;
}

/** Whether this claim takes from any group (an any-group quota, or the rotation), not only groups it names. */
export function takesAnyGroup(request: ClaimRequest): boolean {
  return (request.rotation ?? 0) > 0 || request.quotas.some((q) => q.group === undefined && q.limit > 0);
}

/**
 * Whether a claim could take a paused group's job unless the statement filters it: paused groups
 * exist and the claim takes from any group (an any-group quota, or the rotation). Per-group quotas
 * never name a paused group.
 */
export function reachesPausedGroup(request: ClaimRequest): boolean {
  return !!request.excludeGroups?.length && ((request.rotation ?? 0) > 0 || request.quotas.some((q) => q.group === undefined && q.limit > 0));
}

/** Every group this claim must not take: the paused ones and those at their cap. */
export function skippedGroups(request: ClaimRequest): readonly string[] | undefined {
  if (!request.fullGroups?.length) return request.excludeGroups;
  return [...new Set([...(request.excludeGroups ?? []), ...request.fullGroups])];
}

import { PgArrayLiteral } from '../database/pg-array-literal';
import { sql, type Sql } from '../database/sql';
import type { ClaimRequest } from './claim-request';
import { rotationCursorOf } from './rotation-cursor';
import { claimedColumns, PG_CLAIMED_COLUMNS } from './claimed-job';
import { claimWeightsOf } from './weight-sets.sql';

/**
 * PostgreSQL: one call of `job_queue_claim` (migration 4), which locks the rows to take with
 * SKIP LOCKED, so concurrent claimers split them instead of queueing on each other, and
 * leases exactly those rows, in one statement. Per-group quotas are one LATERAL probe each.
 * Null when no quota asks for rows.
 */
export function postgresClaimStatement(request: ClaimRequest): Sql | null {
  const call = postgresClaimCall(request);
  return call && sql`SELECT ${claimedColumns(request, PG_CLAIMED_COLUMNS)} FROM ${call}`;
}

/** The arguments of a claim function call, as postgresClaimArgs gives them. */
export interface PostgresClaimArgs {
  owner: string;
  types: string[];
  /** Per-group quotas (plain claim). */
  groups: string[];
  limits: number[];
  /** The any-group quota (plain claim). */
  any: number;
  ttlMs: number;
  start: boolean;
  /** Set for the rotation claim, with the groups' weights. */
  rotation: number | null;
  /** The configured group weights (rotation only): a few as array literals built once, many as a stored set (claimWeightsOf). */
  weightGroups: PgArrayLiteral;
  weights: PgArrayLiteral;
  weightSet: string | null;
  /** The rotation cursor's name (rotation only; see rotationCursorOf). */
  cursor: string | null;
}

/**
 * What the claim functions take for `request`: `job_queue_claim_rotation`'s arguments (migrations 7 and 47,
 * the rotation claim of lib/claim/rotation.claim.ts in one round trip) when the request fills
 * slots by rotation, else `job_queue_claim`'s. Null when nothing is asked.
 */
export function postgresClaimArgs(request: ClaimRequest): PostgresClaimArgs | null {
  // Object literals, not spreads of a shared base: Node 20's V8 spends ~1 µs per field added
  // after a spread (see lib/events/job-lifecycle.ts), ~8 µs per call here, once per chain link.
  const { owner, leaseTtlMs: ttlMs } = request;
  const types = [...request.types];
  const start = request.start === true;
  if (request.rotation) {
    const { groups: weightGroups, weights, setId: weightSet } = claimWeightsOf(request.groupWeights);
    return { owner, types, groups: [], limits: [], any: 0, ttlMs, start, rotation: request.rotation, weightGroups, weights, weightSet, cursor: rotationCursorOf(request) };
  }
  const grouped = request.quotas.filter((q) => q.group !== undefined && q.limit > 0);
  const any = request.quotas.filter((q) => q.group === undefined).reduce((n, q) => n + q.limit, 0);
  if (!grouped.length && any <= 0) return null;
  const groups = grouped.map((q) => q.group!);
  const none = claimWeightsOf(undefined);
  return { owner, types, groups, limits: grouped.map((q) => q.limit), any, ttlMs, start, rotation: null, weightGroups: none.groups, weights: none.weights, weightSet: null, cursor: null };
}

/** The function call that claims for `request`, for a FROM clause; null when nothing is asked. */
export function postgresClaimCall(request: ClaimRequest): Sql | null {
  const a = postgresClaimArgs(request);
  if (!a) return null;
  if (a.rotation !== null) {
    return sql`job_queue_claim_rotation(${a.owner}, ${a.types}::text[],
    ${a.rotation}::int, ${a.ttlMs}::float8, ${a.start},
    ${a.weightGroups}::text[], ${a.weights}::int[], ${a.weightSet}::text, ${a.cursor}::text)`;
  }
  return sql`job_queue_claim(${a.owner}, ${a.types}::text[],
    ${a.groups}::text[], ${a.limits}::int[], ${a.any}::int,
    ${a.ttlMs}::float8, ${a.start})`;
}

/**
 * postgresClaimStatement for a transaction that writes more than the claim (a finalize that ends
 * with it): the claim functions commit asynchronously (`synchronous_commit` off for the
 * transaction: a claim lost in a crash only expires), which must not extend to the finalize's
 * writes. The setting is read before the call and put back after it, in the same statement.
 */
export function postgresClaimInTransaction(request: ClaimRequest): Sql | null {
  const call = postgresClaimCall(request);
  if (!call) return null;
  return sql`WITH s AS MATERIALIZED (SELECT current_setting('synchronous_commit') AS sync),
  x AS MATERIALIZED (SELECT ${claimedColumns(request, PG_CLAIMED_COLUMNS)} FROM s, LATERAL ${call}),
  r AS MATERIALIZED (SELECT set_config('synchronous_commit', s.sync, true) FROM s WHERE (SELECT count(*) FROM x) >= 0)
  SELECT x.* FROM x WHERE (SELECT count(*) FROM r) >= 0`;
}

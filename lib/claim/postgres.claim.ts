import { PgArrayLiteral } from '../database/pg-array-literal';
import { sql, type Sql } from '../database/sql';
import type { ClaimRequest } from './claim-request';
import { claimedColumns, PG_CLAIMED_COLUMNS } from './claimed-job';

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
  /** The configured group weights (rotation only), as array literals built once (see weightListsOf). */
  weightGroups: PgArrayLiteral;
  weights: PgArrayLiteral;
}

/**
 * What the claim functions take for `request`: `job_queue_claim_rotation`'s arguments (migration 7,
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
    const { groups: weightGroups, weights } = weightListsOf(request.groupWeights);
    return { owner, types, groups: [], limits: [], any: 0, ttlMs, start, rotation: request.rotation, weightGroups, weights };
  }
  const grouped = request.quotas.filter((q) => q.group !== undefined && q.limit > 0);
  const any = request.quotas.filter((q) => q.group === undefined).reduce((n, q) => n + q.limit, 0);
  if (!grouped.length && any <= 0) return null;
  const groups = grouped.map((q) => q.group!);
  return { owner, types, groups, limits: grouped.map((q) => q.limit), any, ttlMs, start, rotation: null, weightGroups: NO_WEIGHTS.groups, weights: NO_WEIGHTS.weights };
}

/**
 * Group weights a rotation claim function call carries at most. The call takes them as two array
 * literals (built once, see weightListsOf), which PostgreSQL parses on every claim and looks each
 * group up in, so its cost grows with every weight configured. 100 live groups, one worker:
 * 4,425 jobs/s with 101 weights, 4,005 with 3,100, 2,309–2,445 with 10,100 (the statement path:
 * 2,285–2,316), 895 with 30,100. Past this many, the rotation claim takes the statements
 * (lib/claim/rotation.claim.ts), which look a group's weight up in this process.
 */
export const CALL_WEIGHTS_MAX = 10_000;

/** Whether the claim function can carry the request's group weights (see CALL_WEIGHTS_MAX). */
export function weightsFitOneCall(request: ClaimRequest): boolean {
  return !request.rotation || weightListsOf(request.groupWeights).count <= CALL_WEIGHTS_MAX;
}

/** The weights as the call's two array parameters, built once per options object (claims pass the same one). */
interface WeightLists {
  count: number;
  groups: PgArrayLiteral;
  weights: PgArrayLiteral;
}
const weightLists = new WeakMap<Record<string, number>, WeightLists>();
const NO_WEIGHTS: WeightLists = { count: 0, groups: PgArrayLiteral.ofText([]), weights: PgArrayLiteral.ofInt([]) };
function weightListsOf(groupWeights: Record<string, number> | undefined): WeightLists {
  if (!groupWeights) return NO_WEIGHTS;
  let lists = weightLists.get(groupWeights);
  if (!lists) {
    const entries = Object.entries(groupWeights);
    lists = { count: entries.length, groups: PgArrayLiteral.ofText(entries.map(([g]) => g)), weights: PgArrayLiteral.ofInt(entries.map(([, w]) => w)) };
    weightLists.set(groupWeights, lists);
  }
  return lists;
}

/** The function call that claims for `request`, for a FROM clause; null when nothing is asked. */
export function postgresClaimCall(request: ClaimRequest): Sql | null {
  const a = postgresClaimArgs(request);
  if (!a) return null;
  if (a.rotation !== null) {
    return sql`job_queue_claim_rotation(${a.owner}, ${a.types}::text[],
    ${a.rotation}::int, ${a.ttlMs}::float8, ${a.start},
    ${a.weightGroups}::text[], ${a.weights}::int[])`;
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

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

/**
 * The function call that claims for `request`, for a FROM clause: `job_queue_claim_rotation`
 * (migration 7, the rotation claim of lib/claim/rotation.claim.ts in one round trip) when the
 * request fills slots by rotation, else `job_queue_claim`. Null when nothing is asked.
 */
export function postgresClaimCall(request: ClaimRequest): Sql | null {
  if (request.rotation) {
    const weights = Object.entries(request.groupWeights ?? {});
    return sql`job_queue_claim_rotation(${request.owner}, ${[...request.types]}::text[],
    ${request.rotation}::int, ${request.leaseTtlMs}::float8, ${request.start === true},
    ${weights.map(([g]) => g)}::text[], ${weights.map(([, w]) => w)}::int[])`;
  }
  const grouped = request.quotas.filter((q) => q.group !== undefined && q.limit > 0);
  const anyGroup = request.quotas.filter((q) => q.group === undefined).reduce((n, q) => n + q.limit, 0);
  if (!grouped.length && anyGroup <= 0) return null;
  return sql`job_queue_claim(${request.owner}, ${[...request.types]}::text[],
    ${grouped.map((q) => q.group)}::text[], ${grouped.map((q) => q.limit)}::int[], ${anyGroup}::int,
    ${request.leaseTtlMs}::float8, ${request.start === true})`;
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

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
  const grouped = request.quotas.filter((q) => q.group !== undefined && q.limit > 0);
  const anyGroup = request.quotas.filter((q) => q.group === undefined).reduce((n, q) => n + q.limit, 0);
  if (!grouped.length && anyGroup <= 0) return null;
  return sql`SELECT ${claimedColumns(request, PG_CLAIMED_COLUMNS)} FROM job_queue_claim(${request.owner}, ${[...request.types]}::text[],
    ${grouped.map((q) => q.group)}::text[], ${grouped.map((q) => q.limit)}::int[], ${anyGroup}::int,
    ${request.leaseTtlMs}::float8, ${request.start === true})`;
}

/**
 * PostgreSQL: one call of `job_queue_claim_rotation` (migration 7), the rotation claim of
 * lib/claim/rotation.claim.ts in one round trip.
 */
export function postgresRotationClaimStatement(request: ClaimRequest): Sql {
  const weights = Object.entries(request.groupWeights ?? {});
  return sql`SELECT ${claimedColumns(request, PG_CLAIMED_COLUMNS)} FROM job_queue_claim_rotation(${request.owner}, ${[...request.types]}::text[],
    ${request.rotation ?? 0}::int, ${request.leaseTtlMs}::float8, ${request.start === true},
    ${weights.map(([g]) => g)}::text[], ${weights.map(([, w]) => w)}::int[])`;
}

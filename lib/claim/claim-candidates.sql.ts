import type { SqlDialect } from '../database/dialects';
import type { Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { ClaimQuota, ClaimRequest } from './claim-request';
import { claimedColumns, inClaimOrder, toClaimedJob, type ClaimedJob } from './claimed-job';
import { readyByTypeStatement, typeSlices } from './ready-by-type.sql';

/**
 * The ready rows a claim would take, locked: exclusive `FOR UPDATE SKIP LOCKED` on PostgreSQL
 * and MySQL (never the shared form: two claimers holding shared locks on the same row would
 * both try to upgrade and deadlock); plain on SQLite, whose BEGIN IMMEDIATE already excludes
 * every other writer. Each type is read from its own stretch of a ready index, in order, up to
 * the quota (readyByTypeStatement): never a sort of every match, never another type's row.
 */
export function claimCandidatesStatement(
  d: SqlDialect,
  types: readonly string[],
  quota: ClaimQuota,
  excludeGroups?: readonly string[],
  withTrace = false,
): Sql {
  return readyByTypeStatement(d, types, quota.limit, { columns: claimedColumns({ withTrace }), group: quota.group, excludeGroups, lock: true });
}

export async function selectClaimCandidates(tx: SqlExecutor, request: ClaimRequest): Promise<ClaimedJob[]> {
  const found = new Map<number, ClaimedJob>();
  for (const quota of request.quotas) {
    if (quota.limit <= 0) continue;
    // More types than one statement probes: the best of every slice's best, cut to the quota
    // (the rows read beyond it stay locked until the claim commits).
    const slices = typeSlices(tx.dialect, request.types);
    const rows: ClaimedJob[] = [];
    for (const types of slices) {
      const result = await tx.run(claimCandidatesStatement(tx.dialect, types, quota, request.excludeGroups, request.withTrace));
      for (const row of result.rows) rows.push(toClaimedJob(row));
    }
    if (slices.length > 1) rows.sort(inClaimOrder).splice(quota.limit);
    for (const record of rows) found.set(record.id, record);
  }
  return [...found.values()];
}

import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { ClaimQuota, ClaimRequest } from './claim-request';
import { claimedColumns, toClaimedJob, type ClaimedJob } from './claimed-job';
import { claimableFilter, pausedGroupsFilter, readyIndexHint } from './lease-assignments';
import { readyByTypeStatement, typeSlices } from './ready-by-type.sql';

/**
 * The ready rows a claim would take, locked: exclusive `FOR UPDATE SKIP LOCKED` on PostgreSQL
 * and MySQL (never the shared form: two claimers holding shared locks on the same row would
 * both try to upgrade and deadlock); plain on SQLite, whose BEGIN IMMEDIATE already excludes
 * every other writer. The ORDER BY matches the ready index column for column, so the server
 * reads the index in order and stops at the LIMIT instead of sorting (and locking) every
 * match; on MySQL that is `(state, group_key, neg_priority, id)` for a group's quota. A quota of
 * any group reads each type's stretch of the ready index (readyByTypeStatement).
 */
export function claimCandidatesStatement(
  d: SqlDialect,
  types: readonly string[],
  quota: ClaimQuota,
  excludeGroups?: readonly string[],
  withTrace = false,
): Sql {
  if (quota.group === undefined) {
    return readyByTypeStatement(d, types, quota.limit, { columns: claimedColumns({ withTrace }), excludeGroups, lock: true });
  }
  const order = d.name === 'mysql' ? sql`neg_priority, id` : sql`priority DESC, id`;
  const lock = d.name === 'sqlite' ? sql`` : sql` FOR UPDATE SKIP LOCKED`;
  return sql`SELECT ${claimedColumns({ withTrace })} FROM jobs${readyIndexHint(d, quota.group)}
    WHERE ${claimableFilter(d, types, quota.group)}${pausedGroupsFilter(d, excludeGroups)}
    ORDER BY ${order} LIMIT ${quota.limit}${lock}`;
}

export async function selectClaimCandidates(tx: SqlExecutor, request: ClaimRequest): Promise<ClaimedJob[]> {
  const found = new Map<number, ClaimedJob>();
  for (const quota of request.quotas) {
    if (quota.limit <= 0) continue;
    // An any-group quota over more types than one statement probes: the best of every slice's
    // best, cut to the quota (the rows read beyond it stay locked until the claim commits).
    const slices = quota.group === undefined ? typeSlices(tx.dialect, request.types) : [request.types];
    const rows: ClaimedJob[] = [];
    for (const types of slices) {
      const result = await tx.run(claimCandidatesStatement(tx.dialect, types, quota, request.excludeGroups, request.withTrace));
      for (const row of result.rows) rows.push(toClaimedJob(row));
    }
    if (slices.length > 1) rows.sort((a, b) => b.priority - a.priority || a.id - b.id).splice(quota.limit);
    for (const record of rows) found.set(record.id, record);
  }
  return [...found.values()];
}

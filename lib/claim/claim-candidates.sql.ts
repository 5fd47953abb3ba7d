import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { ClaimQuota, ClaimRequest } from './claim-request';
import { claimedColumns, toClaimedJob, type ClaimedJob } from './claimed-job';
import { claimableFilter, pausedGroupsFilter, readyIndexHint } from './lease-assignments';

/**
 * The ready rows a claim would take, locked: exclusive `FOR UPDATE SKIP LOCKED` on PostgreSQL
 * and MySQL (never the shared form: two claimers holding shared locks on the same row would
 * both try to upgrade and deadlock); plain on SQLite, whose BEGIN IMMEDIATE already excludes
 * every other writer. The ORDER BY matches the ready index column for column, so the server
 * reads the index in order and stops at the LIMIT instead of sorting (and locking) every
 * match; on MySQL that is `(state, neg_priority, id)`.
 */
export function claimCandidatesStatement(
  d: SqlDialect,
  types: readonly string[],
  quota: ClaimQuota,
  excludeGroups?: readonly string[],
  withTrace = false,
): Sql {
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
    const { rows } = await tx.run(claimCandidatesStatement(tx.dialect, request.types, quota, request.excludeGroups, request.withTrace));
    for (const row of rows) {
      const record = toClaimedJob(row);
      found.set(record.id, record);
    }
  }
  return [...found.values()];
}

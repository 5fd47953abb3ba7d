import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { ClaimQuota, ClaimRequest } from './claim-request';
import { claimedColumns, toClaimedJob, type ClaimedJob } from './claimed-job';
import { selectClaimCandidates } from './claim-candidates.sql';
import { leaseAssignments } from './lease-assignments';
import { leaseJobs } from './lease-jobs.sql';
import { readyByTypeStatement, TYPES_PER_PROBE } from './ready-by-type.sql';

/**
 * SQLite has no row locks (FOR UPDATE does nothing): the transaction is `BEGIN IMMEDIATE`,
 * which holds the database's single write lock from the start, so select-and-update is
 * atomic against every other connection and process.
 */
export async function claimSqlite(tx: SqlExecutor, request: ClaimRequest): Promise<ClaimedJob[]> {
  const d = tx.dialect;
  // More types than one compound SELECT probes: select, then lease (still one transaction).
  if (request.types.length > TYPES_PER_PROBE) return leaseJobs(tx, request, await selectClaimCandidates(tx, request));
  const claimed: ClaimedJob[] = [];
  for (const quota of request.quotas) {
    if (quota.limit <= 0) continue;
    const { rows } = await tx.run(sqliteClaimStatement(d, request, quota));
    for (const row of rows) claimed.push(toClaimedJob(row));
  }
  return claimed;
}

/** The claim of one quota, exported for EXPLAIN in tests. */
export function sqliteClaimStatement(d: SqlDialect, request: ClaimRequest, quota: ClaimQuota): Sql {
  const pick = readyByTypeStatement(d, request.types, quota.limit, {
    columns: sql`id, priority`,
    group: quota.group,
    excludeGroups: request.excludeGroups,
    lock: false,
  });
  return sql`
    UPDATE jobs SET ${leaseAssignments(d, request)}
    WHERE id IN (SELECT id FROM (${pick}))
    RETURNING ${claimedColumns(request)}`;
}

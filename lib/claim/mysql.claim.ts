import { jobColumns, toJobRecord, type JobRecord } from '../database/job-row';
import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { ClaimQuota, ClaimRequest } from './claim-request';
import { claimableFilter, leaseAssignments } from './lease-assignments';

/**
 * MySQL 8 / MariaDB 10.6+, in a READ COMMITTED transaction: an exclusive locking read with
 * SKIP LOCKED per quota, then one UPDATE by id (MariaDB has no UPDATE … RETURNING). The ORDER BY
 * matches `jobs_ready_idx (state, neg_priority, id)` column for column, so InnoDB reads the
 * index in order and stops at the LIMIT instead of sorting, and locking, every ready row.
 */
export async function claimMysql(tx: SqlExecutor, request: ClaimRequest): Promise<JobRecord[]> {
  const d = tx.dialect;
  const claimed = new Map<number, JobRecord>();
  for (const quota of request.quotas) {
    if (quota.limit <= 0) continue;
    const { rows } = await tx.run(mysqlClaimSelect(d, request.types, quota));
    for (const row of rows) {
      const record = toJobRecord(row, d);
      claimed.set(record.id, record);
    }
  }
  if (!claimed.size) return [];
  const ids = [...claimed.keys()];
  await tx.run(sql`UPDATE jobs SET ${leaseAssignments(d, request)} WHERE id IN (${sql.list(ids)})`);
  const now = new Date();
  return [...claimed.values()].map((job) => ({
    ...job,
    state: request.start ? 'running' : 'leased',
    leaseOwner: request.owner,
    leaseExpires: new Date(now.getTime() + request.leaseTtlMs),
    attempts: job.attempts + 1,
    startedAt: request.start ? now : job.startedAt,
  }));
}

/** The locking read of one quota, exported for EXPLAIN in tests. */
export function mysqlClaimSelect(d: SqlDialect, types: readonly string[], quota: ClaimQuota): Sql {
  return sql`
    SELECT ${jobColumns(d)} FROM jobs
    WHERE ${claimableFilter(d, types, quota.group)}
    ORDER BY neg_priority, id LIMIT ${quota.limit}
    FOR UPDATE SKIP LOCKED`;
}

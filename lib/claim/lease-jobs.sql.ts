import { jobColumns, toJobRecord, type JobRecord } from '../database/job-row';
import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { ClaimRequest } from './claim-request';
import { leaseAssignments } from './lease-assignments';

/** Leases candidates already locked by this transaction (see selectClaimCandidates). */
export async function leaseJobs(tx: SqlExecutor, request: ClaimRequest, candidates: JobRecord[]): Promise<JobRecord[]> {
  if (!candidates.length) return [];
  const d = tx.dialect;
  const ids = candidates.map((c) => c.id).sort((a, b) => a - b);
  const update = sql`UPDATE jobs SET ${leaseAssignments(d, request)} WHERE id IN (${sql.list(ids)})`;
  if (d.supportsReturning) {
    const { rows } = await tx.run(sql`${update} RETURNING ${jobColumns(d)}`);
    return rows.map((r) => toJobRecord(r, d));
  }
  // MariaDB has no UPDATE … RETURNING; the rows are locked, so the read values still hold.
  await tx.run(update);
  const now = new Date();
  return candidates.map((job) => ({
    ...job,
    state: request.start ? 'running' : 'leased',
    leaseOwner: request.owner,
    leaseExpires: new Date(now.getTime() + request.leaseTtlMs),
    attempts: job.attempts + 1,
    startedAt: request.start ? now : job.startedAt,
  }));
}

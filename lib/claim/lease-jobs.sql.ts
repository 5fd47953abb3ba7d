import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { ClaimRequest } from './claim-request';
import { claimedColumns, toClaimedJob, type ClaimedJob } from './claimed-job';
import { leaseAssignments } from './lease-assignments';

/** Leases candidates already locked by this transaction (see selectClaimCandidates). */
export async function leaseJobs(tx: SqlExecutor, request: ClaimRequest, candidates: ClaimedJob[]): Promise<ClaimedJob[]> {
  if (!candidates.length) return [];
  const d = tx.dialect;
  const ids = candidates.map((c) => c.id).sort((a, b) => a - b);
  const update = sql`UPDATE jobs SET ${leaseAssignments(d, request)} WHERE id IN (${sql.list(ids)})`;
  if (d.supportsReturning) {
    const { rows } = await tx.run(sql`${update} RETURNING ${claimedColumns(request)}`);
    return rows.map(toClaimedJob);
  }
  // MariaDB has no UPDATE … RETURNING; the rows are locked, so the read values still hold.
  await tx.run(update);
  // In place: a copy by spread would read (and parse) deferred args (see toClaimedJob).
  for (const job of candidates) job.attempts++;
  return candidates;
}

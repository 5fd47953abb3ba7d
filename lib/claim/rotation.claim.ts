import type { SqlExecutor } from '../database/sql-executor';
import { selectClaimCandidates } from './claim-candidates.sql';
import { skippedGroups, type ClaimRequest } from './claim-request';
import { inClaimOrder, type ClaimedJob } from './claimed-job';
import { leaseJobs } from './lease-jobs.sql';
import { planRotation } from './rotation-plan';
import { leaseJobsMovingCursor, saveRotationCursor, walkRotation } from './rotation.sql';
import { withinLimits, type LimitRoom } from './within-limits';

/**
 * Claims `request.rotation` slots from the groups that follow the shared rotation cursor (see
 * planRotation), inside the caller's transaction, and moves the cursor past them. Cost: one
 * probe per group served (on SQLite a statement each; on MySQL the cursor's lock and the whole
 * walk are one procedure call), plus one statement for the groups given more than one slot,
 * whatever the number of groups; on MySQL the lease and the cursor's move are one statement. With `room` (caps), the
 * candidates are trimmed to what fits; the cursor still moves on, so a group at its cap does
 * not hold up the others. `readFloors` (MySQL): the walk and the larger shares read from each
 * group's first ready row (see walkRotation, selectClaimCandidates).
 */
export async function claimRotation(tx: SqlExecutor, request: ClaimRequest, room?: LimitRoom, readFloors = true): Promise<ClaimedJob[]> {
  const slots = request.rotation ?? 0;
  if (slots <= 0) return [];
  // One more than the slots: the cursor's own group may have had its whole visit already.
  const { cursor, groups } = await walkRotation(tx, request.types, slots + 1, skippedGroups(request) ?? [], readFloors, request.fullGroups ?? []);
  const probed = new Map(groups.map((g) => [g.group, g]));
  const weights = request.groupWeights ?? {};
  const plan = planRotation([...probed.values()].map((g) => ({ group: g.group, weight: weights[g.group] ?? g.weight })), cursor, slots);
  if (!plan.quotas.length) return [];
  // A group with one slot takes the job its probe locked; a larger share is read in one more statement.
  const single = plan.quotas.filter((q) => q.limit === 1).map((q) => probed.get(q.group!)!.next!);
  const more = await selectClaimCandidates(tx, { ...request, quotas: plan.quotas.filter((q) => q.limit > 1) }, readFloors);
  const candidates = [...single, ...more].sort(inClaimOrder);
  const leased = room ? withinLimits(candidates, room) : candidates;
  const moved = plan.cursor.group !== cursor.group || plan.cursor.served !== cursor.served;
  if (moved && leased.length && tx.dialect.name === 'mysql') return leaseJobsMovingCursor(tx, request, leased, plan.cursor);
  const claimed = await leaseJobs(tx, request, leased);
  if (moved) await saveRotationCursor(tx, plan.cursor);
  return claimed;
}

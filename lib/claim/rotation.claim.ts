import type { SqlExecutor } from '../database/sql-executor';
import { selectClaimCandidates } from './claim-candidates.sql';
import type { ClaimRequest } from './claim-request';
import type { ClaimedJob } from './claimed-job';
import { leaseJobs } from './lease-jobs.sql';
import { planRotation } from './rotation-plan';
import { lockRotationCursor, nextReadyGroups, saveRotationCursor } from './rotation.sql';
import { claimSqlite } from './sqlite.claim';
import { withinLimits, type LimitRoom } from './within-limits';

/**
 * Claims `request.rotation` slots from the groups that follow the shared rotation cursor (see
 * planRotation), inside the caller's transaction, and moves the cursor past them. Cost: about
 * two index probes per slot filled, whatever the number of groups. With `room` (caps), the
 * candidates are trimmed to what fits; the cursor still moves on, so a group at its cap does
 * not hold up the others.
 */
export async function claimRotation(tx: SqlExecutor, request: ClaimRequest, room?: LimitRoom): Promise<ClaimedJob[]> {
  const slots = request.rotation ?? 0;
  if (slots <= 0) return [];
  const cursor = await lockRotationCursor(tx);
  // One more than the slots: the cursor's own group may have had its whole visit already.
  const want = slots + 1;
  const ahead = await nextReadyGroups(tx, request.types, cursor.group, want);
  const wrapped = ahead.length < want ? await nextReadyGroups(tx, request.types, '', want - ahead.length, ahead[0]?.group) : [];
  const weights = request.groupWeights ?? {};
  const groups = [...ahead, ...wrapped].map((g) => ({ group: g.group, weight: weights[g.group] ?? g.weight }));
  const plan = planRotation(groups, cursor, slots);
  if (!plan.quotas.length) return [];
  const quotas = { ...request, quotas: plan.quotas };
  let claimed: ClaimedJob[];
  if (tx.dialect.name === 'sqlite' && !room) claimed = await claimSqlite(tx, quotas);
  else {
    const candidates = await selectClaimCandidates(tx, quotas);
    claimed = await leaseJobs(tx, quotas, room ? withinLimits(candidates, room) : candidates);
  }
  if (plan.cursor.group !== cursor.group || plan.cursor.served !== cursor.served) await saveRotationCursor(tx, plan.cursor);
  return claimed;
}

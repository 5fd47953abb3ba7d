import type { SqlExecutor } from '../database/sql-executor';
import { selectClaimCandidates } from './claim-candidates.sql';
import { skippedGroups, type ClaimRequest } from './claim-request';
import { inClaimOrder, type ClaimedJob } from './claimed-job';
import { leaseJobs } from './lease-jobs.sql';
import { rotationCursorOf } from './rotation-cursor';
import { planRotation, type RotationCursor } from './rotation-plan';
import { leaseJobsMovingCursor, saveRotationCursor, walkRotation } from './rotation.sql';

/**
 * Claims `request.rotation` slots from the groups that follow its rotation cursor (see
 * rotationCursorOf, planRotation), inside the caller's transaction, and moves the cursor past them. Cost: one
 * probe per group served (on SQLite a statement each; on MySQL the cursor's lock and the whole
 * walk are one procedure call), plus one statement for the groups given more than one slot,
 * whatever the number of groups; on MySQL the lease and the cursor's move are one statement.
 * Under caps the claim takes its two halves apart (pickRotation, leaseRotation; see
 * claimUnderLimits). `readFloors` (MySQL): the walk and the larger shares read from each
 * group's first ready row (see walkRotation, selectClaimCandidates).
 */
export async function claimRotation(tx: SqlExecutor, request: ClaimRequest, readFloors = true): Promise<ClaimedJob[]> {
  const pick = await pickRotation(tx, request, readFloors);
  return pick ? leaseRotation(tx, request, pick, pick.candidates) : [];
}

/** What a rotation claim walked to: the candidates of the groups it serves, locked, and where the cursor goes next. */
export interface RotationPick {
  candidates: ClaimedJob[];
  /** The cursor's name (rotationCursorOf). */
  cursorName: string;
  from: RotationCursor;
  to: RotationCursor;
}

/**
 * The first half of claimRotation: locks the cursor, walks the groups after it and locks their
 * candidates. Null when no group has a slot. The caller may lock more (the caps of the groups
 * reached) before leaseRotation.
 */
export async function pickRotation(tx: SqlExecutor, request: ClaimRequest, readFloors = true): Promise<RotationPick | null> {
  const slots = request.rotation ?? 0;
  if (slots <= 0) return null;
  // One more than the slots: the cursor's own group may have had its whole visit already.
  const cursorName = rotationCursorOf(request);
  const { cursor, groups } = await walkRotation(tx, cursorName, request.types, slots + 1, skippedGroups(request) ?? [], readFloors, request.fullGroups ?? []);
  const probed = new Map(groups.map((g) => [g.group, g]));
  const weights = request.groupWeights ?? {};
  const plan = planRotation([...probed.values()].map((g) => ({ group: g.group, weight: Object.hasOwn(weights, g.group) ? weights[g.group] : g.weight })), cursor, slots);
  if (!plan.quotas.length) return null;
  // A group with one slot takes the job its probe locked; a larger share is read in one more statement.
  const single = plan.quotas.filter((q) => q.limit === 1).map((q) => probed.get(q.group!)!.next!);
  const more = await selectClaimCandidates(tx, { ...request, quotas: plan.quotas.filter((q) => q.limit > 1) }, readFloors);
  return { candidates: [...single, ...more].sort(inClaimOrder), cursorName, from: cursor, to: plan.cursor };
}

/**
 * The second half: leases `leased` (the pick's candidates, or those of them that fit under the
 * caps) and moves the cursor on. It moves even when caps left nothing to lease, so a group at its
 * cap does not hold up the others.
 */
export async function leaseRotation(tx: SqlExecutor, request: ClaimRequest, pick: RotationPick, leased: ClaimedJob[]): Promise<ClaimedJob[]> {
  const moved = pick.to.group !== pick.from.group || pick.to.served !== pick.from.served;
  if (moved && leased.length && tx.dialect.name === 'mysql') return leaseJobsMovingCursor(tx, request, leased, pick.cursorName, pick.to);
  const claimed = await leaseJobs(tx, request, leased);
  if (moved) await saveRotationCursor(tx, pick.cursorName, pick.to);
  return claimed;
}

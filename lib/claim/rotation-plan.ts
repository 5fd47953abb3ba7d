import type { ClaimQuota } from './claim-request';

/** Where the shared fair-share rotation stands: the group being visited and the slots it got so far. */
export interface RotationCursor {
  group: string;
  served: number;
}

/** A group with ready work, in rotation order, and its weight. */
export interface RotationGroup {
  group: string;
  weight: number;
}

export interface RotationPlan {
  quotas: ClaimQuota[];
  cursor: RotationCursor;
}

/**
 * Weighted round-robin over the ready groups in index order: each visit gives a group `weight`
 * slots, spread over as many claims as it takes, then moves to the next group; after the last
 * group it wraps to the first. `groups` starts at the cursor's group (or the first one after it)
 * and follows the index order, wrapped; a group whose visit is complete is passed over.
 *
 * So with G backlogged groups of equal weight every group gets its next slot within one round
 * of G slots, wherever its key sorts, and the cost of a claim depends on the slots it fills,
 * never on the number of groups.
 */
export function planRotation(groups: readonly RotationGroup[], cursor: RotationCursor, free: number): RotationPlan {
  const quotas: ClaimQuota[] = [];
  let next = cursor;
  let left = free;
  let completed: RotationGroup | undefined;
  for (const g of groups) {
    if (left <= 0) break;
    const weight = Math.max(1, Math.floor(g.weight));
    const already = g.group === cursor.group ? cursor.served : 0;
    const take = Math.min(weight - already, left);
    if (take <= 0) {
      completed = g; // its visit is complete: on to the next group
      continue;
    }
    if (quotas.some((q) => q.group === g.group)) break; // wrapped all the way round
    quotas.push({ group: g.group, limit: take });
    left -= take;
    next = { group: g.group, served: already + take };
  }
  // Slots left means the list held every ready group (each other group took at least one):
  // the round has come back to the cursor's group, whose completed visit is followed by a
  // new one. Without this a lone group whose visit was complete got nothing, and an idle
  // worker woken for its next job claimed nothing until its poll.
  if (left > 0 && completed && !quotas.some((q) => q.group === completed.group)) {
    const take = Math.min(Math.max(1, Math.floor(completed.weight)), left);
    quotas.push({ group: completed.group, limit: take });
    next = { group: completed.group, served: take };
  }
  return { quotas, cursor: next };
}

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
 *
 * Slots left after one pass mean the list held every ready group (the walk asks for one more
 * group than slots, and each group took at least one): the round then goes on over the same
 * groups, a new visit each, until the slots are used, as successive claims would. Stopping after
 * one visit per group left a lone group under per-group caps (claimed through the rotation, see
 * claimUnderLimits) one job per claim: 100–230 jobs/s on every dialect, against ~1,500 for the
 * same group without caps (.scratch/drain.js, 2026-12-05).
 */
export function planRotation(groups: readonly RotationGroup[], cursor: RotationCursor, free: number): RotationPlan {
  const slots = new Map<string, number>();
  const order: RotationGroup[] = [];
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
    if (slots.has(g.group)) break; // wrapped all the way round
    slots.set(g.group, take);
    order.push(g);
    left -= take;
    next = { group: g.group, served: already + take };
  }
  // The round goes on: the cursor's completed group first (it follows the last one served),
  // then every group again in the same order, a whole visit each.
  if (left > 0 && completed && !slots.has(completed.group)) order.unshift(completed);
  while (left > 0 && order.length) {
    for (const g of order) {
      if (left <= 0) break;
      const take = Math.min(Math.max(1, Math.floor(g.weight)), left);
      slots.set(g.group, (slots.get(g.group) ?? 0) + take);
      left -= take;
      next = { group: g.group, served: take };
    }
  }
  return { quotas: [...slots].map(([group, limit]) => ({ group, limit })), cursor: next };
}

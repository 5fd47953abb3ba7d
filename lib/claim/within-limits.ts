/** Room left under each limit; absent keys are unlimited. */
export interface LimitRoom {
  total?: number;
  groups?: Record<string, number>;
  types?: Record<string, number>;
}

/**
 * Keeps, in order, the candidates that fit under every limit at once (global, per group,
 * per type), counting down the room as it goes. Pure; the claim calls it under the limit locks.
 */
export function withinLimits<T extends { group: string; type: string }>(candidates: readonly T[], room: LimitRoom): T[] {
  let total = room.total ?? Infinity;
  const groups = { ...room.groups };
  const types = { ...room.types };
  const chosen: T[] = [];
  for (const c of candidates) {
    if (total <= 0) break;
    if (groups[c.group] !== undefined && groups[c.group] <= 0) continue;
    if (types[c.type] !== undefined && types[c.type] <= 0) continue;
    chosen.push(c);
    total--;
    if (groups[c.group] !== undefined) groups[c.group]--;
    if (types[c.type] !== undefined) types[c.type]--;
  }
  return chosen;
}

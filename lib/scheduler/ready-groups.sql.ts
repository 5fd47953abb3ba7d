import { nextReadyGroups } from '../claim/rotation.sql';
import type { SqlExecutor } from '../database/sql-executor';

export interface ReadyGroup {
  group: string;
  /** Weight of the group's next job. */
  weight: number;
}

/**
 * The first `max` groups (in key order) that have claimable jobs of these types, with the
 * weight of each group's next job: a loose index scan over the ready rows' (group, type) pairs,
 * so the cost follows the groups and their types, never the jobs (nextReadyGroups). The planner
 * asks for one more than its concurrency, only to learn whether the groups fit in its slots,
 * every 250 ms while the worker is busy. Paused groups are stepped over (one probe each).
 */
export function readyGroups(db: SqlExecutor, types: readonly string[], max: number, paused: ReadonlySet<string> = new Set()): Promise<ReadyGroup[]> {
  return nextReadyGroups(db, types, '', max, undefined, false, paused);
}

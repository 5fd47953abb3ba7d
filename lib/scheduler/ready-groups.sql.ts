import { claimableFilter, readyIndexHint } from '../claim/lease-assignments';
import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';

export interface ReadyGroup {
  group: string;
  /** Weight of the group's next job. */
  weight: number;
}

/**
 * The groups that have claimable jobs of these types, found by a loose index scan over the
 * ready group index (one probe per group, however many jobs each holds), with the weight of
 * each group's next job.
 */
export async function readyGroups(db: SqlExecutor, types: readonly string[], max = 1_000): Promise<ReadyGroup[]> {
  const d = db.dialect;
  const ready = claimableFilter(d, types, undefined);
  const order = d.name === 'mysql' ? sql`neg_priority, id` : sql`priority DESC, id`;
  // Pinned to the ready group index: find()'s (type, id) index would otherwise walk finished rows on SQLite.
  const hint = readyIndexHint(d, '');
  const { rows } = await db.run(sql`
    WITH RECURSIVE g (group_key) AS (
      SELECT MIN(group_key) FROM jobs${hint} WHERE ${ready}
      UNION ALL
      SELECT (SELECT MIN(j.group_key) FROM jobs j${hint} WHERE ${claimableFilter(d, types, undefined, 'j')} AND j.group_key > g.group_key)
      FROM g WHERE g.group_key IS NOT NULL
    )
    SELECT g.group_key,
      (SELECT w.weight FROM jobs w${hint} WHERE ${claimableFilter(d, types, undefined, 'w')} AND w.group_key = g.group_key
        ORDER BY ${order} LIMIT 1) AS weight
    FROM g WHERE g.group_key IS NOT NULL LIMIT ${max}`);
  return rows.map((r) => ({ group: String(r.group_key), weight: Math.max(1, Number(r.weight ?? 1)) }));
}

import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobState } from '../job.types';
import { trimBusiest, type GroupLoad } from './busiest-groups';
import { readOldestReadyAgeMs } from './oldest-ready.sql';
import { readRecentFinished } from './recent-finished.sql';
import type { QueueStats } from './queue-stats';
import { countStates, OPEN_STATES, TERMINAL_STATES } from './state-counts.sql';

export { readOldestReadyAgeMs } from './oldest-ready.sql';

/** Jobs per state, every state present: exact, each state counted through an index. */
export async function readStateCounts(db: SqlExecutor): Promise<Record<JobState, number>> {
  const [open, terminal] = await Promise.all([countStates(db, OPEN_STATES), countStates(db, TERMINAL_STATES)]);
  return { ...open, ...terminal };
}

/**
 * The `limit` groups with the most open work (ready, leased, running), and how many groups have
 * any: one statement, whose answer is bounded whatever the number of tenants. SQLite: by slices
 * (readBusiestGroupsSliced).
 */
export async function readBusiestGroups(db: SqlExecutor, limit: number): Promise<{ groups: QueueStats['groups']; count: number }> {
  if (db.dialect.name === 'sqlite') return readBusiestGroupsSliced(db, limit);
  const { rows } = await db.run(busiestGroupsStatement(limit));
  return {
    groups: rows.map((r) => ({ group: String(r.group_key), ready: Number(r.ready), running: Number(r.running) })),
    count: rows.length ? Number(rows[0].total) : 0,
  };
}

/** The busiest groups in one statement: `group_key, ready, running, total` (groups in all). */
export function busiestGroupsStatement(limit: number): Sql {
  return sql`SELECT group_key, ready, running, COUNT(*) OVER () AS total FROM (
      SELECT group_key, SUM(CASE WHEN state = 'ready' THEN 1 ELSE 0 END) AS ready, SUM(CASE WHEN state = 'ready' THEN 0 ELSE 1 END) AS running
      FROM jobs WHERE state IN ('ready', 'leased', 'running') GROUP BY group_key) g
    ORDER BY ready + running DESC, group_key LIMIT ${limit}`;
}

/** Groups one slice of SQLite's ready-group index counts. */
export const SQLITE_GROUP_SLICE = 500;

/** SQLite: the ready jobs of the next `SQLITE_GROUP_SLICE` groups after `after`, counted in the ready-group index. */
export function sqliteReadyGroupsSlice(after: string | null): Sql {
  return sql`SELECT group_key, COUNT(*) AS n FROM jobs INDEXED BY jobs_ready_group_idx
    WHERE state = 'ready'${after === null ? sql`` : sql` AND group_key > ${after}`}
    GROUP BY group_key ORDER BY group_key LIMIT ${SQLITE_GROUP_SLICE}`;
}

/**
 * SQLite runs a statement on the event loop: one GROUP BY over 1,000,000 ready jobs held it for
 * 600-800 ms. Here the in-flight groups come from the in-flight index (a cluster's slots), then
 * the ready ones by slices of groups from the covering ready-group index, with a turn of the
 * event loop between slices; at most 2 × limit groups are held at once.
 */
async function readBusiestGroupsSliced(db: SqlExecutor, limit: number): Promise<{ groups: QueueStats['groups']; count: number }> {
  const inFlight = new Map<string, number>();
  const { rows: flying } = await db.run(sql`SELECT group_key, COUNT(*) AS n FROM jobs WHERE state IN ('leased', 'running') GROUP BY group_key`);
  for (const r of flying) inFlight.set(String(r.group_key), Number(r.n));
  let busiest: GroupLoad[] = [];
  let count = 0;
  let after: string | null = null;
  for (;;) {
    const { rows } = await db.run(sqliteReadyGroupsSlice(after));
    for (const r of rows) {
      const group = String(r.group_key);
      busiest.push({ group, ready: Number(r.n), running: inFlight.get(group) ?? 0 });
      inFlight.delete(group);
      count++;
    }
    busiest = trimBusiest(busiest, limit);
    if (rows.length < SQLITE_GROUP_SLICE) break;
    after = String(rows[rows.length - 1].group_key);
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (const [group, running] of inFlight) busiest.push({ group, ready: 0, running });
  count += inFlight.size;
  return { groups: trimBusiest(busiest, limit, true), count };
}

export async function readQueueStats(db: SqlExecutor, windowMs: number, groupsLimit: number): Promise<Omit<QueueStats, 'schedules' | 'scheduleCount'>> {
  const [byState, busiest, oldestReadyAgeMs, recent] = await Promise.all([
    readStateCounts(db),
    readBusiestGroups(db, groupsLimit),
    readOldestReadyAgeMs(db),
    readRecentFinished(db, windowMs),
  ]);
  const finished = recent.done + recent.failed;
  return {
    byState,
    groups: busiest.groups,
    groupCount: busiest.count,
    running: byState.leased + byState.running,
    oldestReadyAgeMs,
    recent: {
      windowMs,
      done: recent.done,
      failed: recent.failed,
      failureRate: finished ? recent.failed / finished : 0,
      meanDurationMs: recent.meanDurationMs,
    },
  };
}

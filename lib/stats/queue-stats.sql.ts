import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobState } from '../job.types';
import { readOldestReadyAgeMs } from './oldest-ready.sql';
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
 * any: one statement, whose answer is bounded whatever the number of tenants.
 */
export async function readBusiestGroups(db: SqlExecutor, limit: number): Promise<{ groups: QueueStats['groups']; count: number }> {
  const { rows } = await db.run(sql`SELECT group_key, ready, running, COUNT(*) OVER () AS total FROM (
      SELECT group_key, SUM(CASE WHEN state = 'ready' THEN 1 ELSE 0 END) AS ready, SUM(CASE WHEN state = 'ready' THEN 0 ELSE 1 END) AS running
      FROM jobs WHERE state IN ('ready', 'leased', 'running') GROUP BY group_key) g
    ORDER BY ready + running DESC, group_key LIMIT ${limit}`);
  return {
    groups: rows.map((r) => ({ group: String(r.group_key), ready: Number(r.ready), running: Number(r.running) })),
    count: rows.length ? Number(rows[0].total) : 0,
  };
}

export async function readQueueStats(db: SqlExecutor, windowMs: number, groupsLimit: number): Promise<Omit<QueueStats, 'schedules' | 'scheduleCount'>> {
  const d = db.dialect;
  const now = d.now();
  const since = d.addMs(now, -windowMs);
  const [byState, busiest, oldestReadyAgeMs, recentRows] = await Promise.all([
    readStateCounts(db),
    readBusiestGroups(db, groupsLimit),
    readOldestReadyAgeMs(db),
    db.run(sql`SELECT state, COUNT(*) AS n, AVG(${d.diffMs(sql`started_at`, sql`finished_at`)}) AS mean
      FROM jobs WHERE finished_at >= ${since} AND state IN ('done', 'failed') GROUP BY state`),
  ]);
  const recent = { done: 0, failed: 0, mean: null as number | null };
  for (const r of recentRows.rows) {
    if (r.state === 'done') {
      recent.done = Number(r.n);
      recent.mean = r.mean == null ? null : Math.round(Number(r.mean));
    } else recent.failed = Number(r.n);
  }
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
      meanDurationMs: recent.mean,
    },
  };
}

import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobState } from '../job.types';
import type { QueueStats } from './queue-stats';

const STATES: JobState[] = ['waiting', 'ready', 'leased', 'running', 'done', 'failed', 'cancelled'];

/** Jobs per state, every state present. */
export async function readStateCounts(db: SqlExecutor): Promise<Record<JobState, number>> {
  const { rows } = await db.run(sql`SELECT state, COUNT(*) AS n FROM jobs GROUP BY state`);
  const byState = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<JobState, number>;
  for (const r of rows) byState[r.state as JobState] = Number(r.n);
  return byState;
}

/** Age in ms of the longest-waiting claimable job (0 when none). */
export async function readOldestReadyAgeMs(db: SqlExecutor): Promise<number> {
  const d = db.dialect;
  const now = d.now();
  // A promoted or retried job became claimable at updated_at, a delayed one at run_after.
  const { rows } = await db.run(sql`SELECT MAX(${d.diffMs(sql`CASE WHEN run_after > updated_at THEN run_after ELSE updated_at END`, now)}) AS age
      FROM jobs WHERE state = 'ready' AND run_after <= ${now}`);
  return Math.max(0, Math.round(Number(rows[0]?.age ?? 0)));
}

export async function readQueueStats(db: SqlExecutor, windowMs: number): Promise<Omit<QueueStats, 'schedules'>> {
  const d = db.dialect;
  const now = d.now();
  const since = d.addMs(now, -windowMs);
  const [byState, groupRows, oldestReadyAgeMs, recentRows] = await Promise.all([
    readStateCounts(db),
    db.run(sql`SELECT group_key, state, COUNT(*) AS n FROM jobs WHERE state IN ('ready', 'leased', 'running') GROUP BY group_key, state`),
    readOldestReadyAgeMs(db),
    db.run(sql`SELECT state, COUNT(*) AS n, AVG(${d.diffMs(sql`started_at`, sql`finished_at`)}) AS mean
      FROM jobs WHERE finished_at >= ${since} AND state IN ('done', 'failed') GROUP BY state`),
  ]);
  const groups = new Map<string, { group: string; ready: number; running: number }>();
  for (const r of groupRows.rows) {
    const g = groups.get(String(r.group_key)) ?? { group: String(r.group_key), ready: 0, running: 0 };
    if (r.state === 'ready') g.ready += Number(r.n);
    else g.running += Number(r.n);
    groups.set(g.group, g);
  }
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
    groups: [...groups.values()].sort((a, b) => a.group.localeCompare(b.group)),
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

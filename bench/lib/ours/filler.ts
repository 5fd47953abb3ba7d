import type { Dialect } from 'nestjs-sql-job-queue';
import type { Probe } from '../databases';

/**
 * Filler rows for the scan-cost scenario, written with bulk SQL straight into our `jobs` table
 * (not through the API): generate_series on PostgreSQL, a recursive CTE on SQLite, INSERT…SELECT
 * doubling on MariaDB. Filler has its own type ('filler'), so no worker ever runs it.
 */

const NOW: Record<Dialect, string> = {
  postgres: 'now()',
  mysql: 'UTC_TIMESTAMP(3)',
  sqlite: `strftime('%Y-%m-%d %H:%M:%f', 'now')`,
};

/** Finished rows, as a long-running queue accumulates them. */
export async function fillDone(probe: Probe, dialect: Dialect, count: number): Promise<void> {
  const now = NOW[dialect];
  const cols = `type, args, result, state, group_key, weight, priority, run_after, attempts, max_attempts, created_at, started_at, finished_at, updated_at`;
  const vals = `'filler', '{}', 'null', 'done', 'default', 1, 0, ${now}, 1, 3, ${now}, ${now}, ${now}, ${now}`;
  await bulkInsert(probe, dialect, cols, vals, count);
}

/**
 * Ready rows of a type no bench worker handles ('filler'), older than anything the bench enqueues
 * and of the same priority: the backlog of another team's job type that a worker handling only
 * its own types must step over.
 */
export async function fillReady(probe: Probe, dialect: Dialect, count: number): Promise<void> {
  const now = NOW[dialect];
  const cols = `type, args, state, group_key, weight, priority, run_after, attempts, max_attempts, created_at, updated_at`;
  const vals = `'filler', '{}', 'ready', 'default', 1, 0, ${now}, 0, 3, ${now}, ${now}`;
  await bulkInsert(probe, dialect, cols, vals, count);
}

/** A day after now, in each dialect's stored form. */
const TOMORROW: Record<Dialect, string> = {
  postgres: `now() + interval '1 day'`,
  mysql: 'UTC_TIMESTAMP(3) + INTERVAL 1 DAY',
  sqlite: `strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 day')`,
};

/**
 * Ready rows of the bench workers' own type ('noop') due tomorrow, older than anything the bench
 * enqueues and of the same priority: reminders scheduled a day ahead, or retries backing off,
 * that every claim of the type must step over until they are due.
 */
export async function fillDelayed(probe: Probe, dialect: Dialect, count: number): Promise<void> {
  const now = NOW[dialect];
  const cols = `type, args, state, group_key, weight, priority, run_after, attempts, max_attempts, created_at, updated_at`;
  const vals = `'noop', '{}', 'ready', 'default', 1, 0, ${TOMORROW[dialect]}, 0, 3, ${now}, ${now}`;
  await bulkInsert(probe, dialect, cols, vals, count);
}

/**
 * Waiting rows of a large DAG: job i depends on i−1 and i−10 (where those are filler too), so
 * the rows form interleaved chains whose heads never become ready. Nothing ever promotes them.
 */
export async function fillWaiting(probe: Probe, dialect: Dialect, count: number): Promise<void> {
  const now = NOW[dialect];
  const cols = `type, args, state, pending_deps, group_key, weight, priority, run_after, attempts, max_attempts, created_at, updated_at`;
  const vals = `'filler', '{}', 'waiting', 2, 'default', 1, 0, ${now}, 0, 3, ${now}, ${now}`;
  await bulkInsert(probe, dialect, cols, vals, count);
  for (const step of [1, 10]) {
    await probe.query(
      `INSERT INTO job_deps (job_id, depends_on_id)
       SELECT a.id, b.id FROM jobs a JOIN jobs b ON b.id = a.id - ${step}
       WHERE a.type = 'filler' AND b.type = 'filler'`,
    );
  }
}

/** Refreshes planner statistics, as autovacuum / InnoDB would in a live system. */
export async function analyze(probe: Probe, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await probe.query('VACUUM ANALYZE jobs');
  else if (dialect === 'mysql') await probe.query('ANALYZE TABLE jobs, job_deps');
  else await probe.query('ANALYZE');
}

async function bulkInsert(probe: Probe, dialect: Dialect, cols: string, vals: string, count: number): Promise<void> {
  if (dialect === 'postgres') {
    await probe.query(`INSERT INTO jobs (${cols}) SELECT ${vals} FROM generate_series(1, $1)`, [count]);
  } else if (dialect === 'sqlite') {
    await probe.query(`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?) INSERT INTO jobs (${cols}) SELECT ${vals} FROM s`, [
      count,
    ]);
  } else {
    // MariaDB/MySQL: one row, then double it (capped) until there are `count`. The rows written
    // so far are only a row source (the values are constants): at least `have` rows exist.
    await probe.query(`INSERT INTO jobs (${cols}) VALUES (${vals})`);
    let have = 1;
    while (have < count) {
      const take = Math.min(have, count - have);
      await probe.query(`INSERT INTO jobs (${cols}) SELECT ${vals} FROM (SELECT id FROM jobs LIMIT ${take}) s`);
      have += take;
    }
  }
}

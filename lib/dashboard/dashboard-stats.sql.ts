import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';
import type { JobState } from '../job.types';

/**
 * The overview's statements. Each reads a bounded number of index entries, so the overview
 * stays cheap on a table of millions: counts stop at a cap (the page shows "100,000+"), the
 * throughput reads at most a few thousand rows per minute (finished-strata.ts), and in-flight
 * rows are few.
 */

/** Jobs in one state, counted up to `cap` through the (state, id) index. */
export function cappedStateCount(state: JobState, cap: number): Sql {
  return sql`SELECT COUNT(*) AS n FROM (SELECT id FROM jobs WHERE state = ${state} LIMIT ${cap}) t`;
}

/**
 * `columns` of at most `cap` rows in each of `states`, one arm per state, so that each reads its
 * own index range. With `state IN (…)` and a LIMIT the planners chose to scan the whole table:
 * PostgreSQL for ready + in flight (1,000,000 jobs, 10,000 ready: 100-118 ms, 23-27 ms in arms),
 * SQLite for leased + running (100-140 ms with none in flight, under 1 ms in arms).
 */
function perState(columns: string, states: readonly JobState[], cap: number): Sql {
  return sql.join(
    states.map((state, i) => sql`SELECT ${sql.raw(columns)} FROM (SELECT ${sql.raw(columns)} FROM jobs WHERE state = ${state} LIMIT ${cap}) ${sql.raw(`s${i}`)}`),
    ' UNION ALL ',
  );
}

/** Ready and in-flight jobs per group (and the group's weight), at most `cap` rows of each state. */
export function groupsInFlight(cap: number): Sql {
  return sql`SELECT group_key, state, COUNT(*) AS n, MAX(weight) AS weight
    FROM (${perState('group_key, state, weight', ['ready', 'leased', 'running'], cap)}) t GROUP BY group_key, state`;
}

/** Lease owners (worker processes) with jobs in flight, and the age of their latest heartbeat. */
export function workersInFlight(d: SqlDialect, limit: number): Sql {
  return sql`SELECT lease_owner, COUNT(*) AS n, MIN(${d.diffMs(sql`heartbeat_at`, d.now())}) AS heartbeat_age
    FROM jobs WHERE state IN ('leased', 'running') AND lease_owner IS NOT NULL
    GROUP BY lease_owner ORDER BY COUNT(*) DESC, lease_owner LIMIT ${limit}`;
}

/** Recurring schedules in all (the table holds one row per schedule, thousands at most). */
export function scheduleCount(): Sql {
  return sql`SELECT COUNT(*) AS n FROM job_queue_schedules`;
}

/**
 * The first `limit` paused entries, by kind then name: the primary key's first entries. Their
 * count is a statement of its own: `COUNT(*) OVER ()` beside the page computed the window over
 * every entry and sorted them all before the limit (400,000 paused groups: 686 ms a refresh on
 * MariaDB, 79 ms on PostgreSQL, 133 ms on SQLite's event loop; 30, 17-23 and under 1 ms now).
 */
export function pausedPreview(limit: number): Sql {
  return sql`SELECT kind, name FROM job_queue_paused ORDER BY kind, name LIMIT ${limit}`;
}

/** Paused entries in all: a plain count, which SQLite answers from the table's size and the others from an index. */
export function pausedCount(): Sql {
  return sql`SELECT COUNT(*) AS n FROM job_queue_paused`;
}

/** Waiting, ready and in-flight jobs per type, at most `cap` rows of each state. */
export function typesAtWork(cap: number): Sql {
  return sql`SELECT type, state, COUNT(*) AS n FROM (${perState('type, state', ['waiting', 'ready', 'leased', 'running'], cap)}) t GROUP BY type, state`;
}

/** Failed jobs per type, from at most `cap` of them (failed rows stay until retention takes them). */
export function failedByType(cap: number): Sql {
  return sql`SELECT type, COUNT(*) AS n FROM (SELECT type FROM jobs WHERE state = 'failed' LIMIT ${cap}) t GROUP BY type`;
}

/** Which of `types` (a shown page of them, at most a few dozen) are paused. */
export function pausedTypesAmong(types: readonly string[]): Sql {
  return sql`SELECT name FROM job_queue_paused WHERE kind = 'type' AND name IN (${sql.list(types)})`;
}

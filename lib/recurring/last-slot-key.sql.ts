import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobState } from '../job.types';

/**
 * The key of the job a schedule row enqueued for its last slot, computed in SQL as slotKey()
 * writes it in JavaScript (`recurring:<name>:<slot as toISOString>`), from the row's `last_slot`
 * (UTC on every dialect: timestamptz, DATETIME(3) and SQLite's 'YYYY-MM-DD HH:MM:SS.SSS' text).
 */
export function lastSlotKey(d: SqlDialect): Sql {
  switch (d.name) {
    case 'postgres':
      return sql`${sql.raw(`('recurring:' || job_queue_schedules.name || ':' || to_char(job_queue_schedules.last_slot AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`)}`;
    case 'mysql':
      // %f is microseconds (6 digits); the key has milliseconds.
      return sql`${sql.raw(`CONCAT('recurring:', job_queue_schedules.name, ':', LEFT(DATE_FORMAT(job_queue_schedules.last_slot, '%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z')`)}`;
    default:
      return sql`${sql.raw(`('recurring:' || job_queue_schedules.name || ':' || replace(job_queue_schedules.last_slot, ' ', 'T') || 'Z')`)}`;
  }
}

/**
 * Schedules whose last slot's job is in one of `states`: one lookup per schedule in the key's
 * unique index (partial on PostgreSQL and SQLite, hence the IS NOT NULL their planners need). A
 * scalar subquery, not EXISTS: PostgreSQL turned EXISTS into a join and, with statistics from
 * before 10,000 slot jobs were written, chose a nested loop over every ready job per schedule
 * (28 s for one page); a scalar subquery stays a lookup per row whatever the statistics say.
 */
export function lastRunIn(d: SqlDialect, states: readonly JobState[]): Sql {
  return sql`(job_queue_schedules.last_slot IS NOT NULL AND (SELECT jobs.state FROM jobs WHERE jobs.job_key IS NOT NULL
    AND jobs.job_key = ${lastSlotKey(d)}) IN (${sql.list(states)}))`;
}

/**
 * How many schedules' last slot job failed: the dashboard's "Schedules failing" and the metric
 * job_queue_schedules_failing. It walks every schedule (one key lookup each: 10,000 in 11-41 ms
 * by dialect), so both read it at a pace, not on every request.
 */
export function failingScheduleCount(d: SqlDialect): Sql {
  return sql`SELECT COUNT(*) AS n FROM job_queue_schedules WHERE ${lastRunIn(d, ['failed'])}`;
}

/** failingScheduleCount, read. */
export async function countFailingSchedules(db: SqlExecutor): Promise<number> {
  return Number((await db.run(failingScheduleCount(db.dialect))).rows[0]?.n ?? 0);
}

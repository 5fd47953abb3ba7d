import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';

/**
 * What a row of the schedules table shows, as a findSchedules select list: the first `chars`
 * characters of args, with their full length, instead of the whole value, which may be megabytes
 * (args are stored as compact JSON, the table's preview form).
 */
export function schedulePreviewColumns(d: SqlDialect, chars: number): Sql {
  const length = sql.raw(d.name === 'sqlite' ? 'length' : 'char_length');
  const n = sql.raw(String(Math.trunc(chars)));
  return sql`name, cron, time_zone, job_type, job_options,
    ${d.selectTime('next_run_at')} AS next_run_at, ${d.selectTime('last_slot')} AS last_slot, ${d.selectTime('declared_until')} AS declared_until,
    substr(args, 1, ${n}) AS args_head, ${length}(args) AS args_length`;
}

/**
 * The jobs of the given keys (a page of schedules' last slots): one lookup each in the key's
 * unique index, which is partial on PostgreSQL and SQLite, hence the IS NOT NULL its planner
 * needs to use it. At most a page of keys, far below every dialect's bind limit.
 */
export function jobsOfKeys(keys: readonly string[]): Sql {
  return sql`SELECT id, state, job_key FROM jobs WHERE job_key IS NOT NULL AND job_key IN (${sql.list(keys)})`;
}

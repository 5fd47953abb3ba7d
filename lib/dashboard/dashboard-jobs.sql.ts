import type { SqlDialect } from '../database/dialects';
import { jobColumnsReplacing } from '../database/job-row';
import { sql, type Sql } from '../database/sql';

/**
 * What a row of the jobs table shows, as a find() select list: the first `chars` characters of
 * args and of the error, with their full lengths, instead of the whole values, which may be
 * megabytes each (args are stored as compact JSON, the table's preview form).
 */
export function jobPreviewColumns(d: SqlDialect, chars: number): Sql {
  const length = sql.raw(d.name === 'sqlite' ? 'length' : 'char_length');
  const n = sql.raw(String(Math.trunc(chars)));
  return sql`id, type, state, group_key, attempts, max_attempts, progress, current_stage, is_container, parent_id,
    ${d.selectTime('created_at')} AS created_at, ${d.selectTime('finished_at')} AS finished_at,
    substr(args, 1, ${n}) AS args_head, ${length}(args) AS args_length,
    substr(last_error, 1, ${n}) AS error_head, ${length}(last_error) AS error_length`;
}

/**
 * The job page's row: every column, but args, result and the error only as their first `chars`
 * characters, each with its full length (`args_length`…). The page polls every 2 s, and whole
 * values are up to `maxResultBytes` (16 MB by default on PostgreSQL, 256 MB at most) to send 64 KiB.
 */
export function jobDetailStatement(d: SqlDialect, id: number, chars: number): Sql {
  const length = d.name === 'sqlite' ? 'length' : 'char_length';
  const n = String(Math.trunc(chars));
  const head = (column: string) => sql`${sql.raw(`substr(${column}, 1, ${n}) AS ${column}, ${length}(${column}) AS ${column}_length`)}`;
  return sql`SELECT ${jobColumnsReplacing(d, { args: head('args'), result: head('result'), last_error: head('last_error') })} FROM jobs WHERE id = ${id}`;
}

import type { Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { decodeKeyCursor, encodeKeyCursor } from '../query/find-cursor';
import { normalizePageOptions, type FindOptions } from '../query/job-filter';
import { normalizeScheduleFilter, scheduleFilterText } from './schedule-filter';
import { schedulesPage } from './schedules.sql';

/**
 * `findSchedules`' filter, pages and cursors, reading `select` (whole schedules by default; the
 * dashboard's table reads the start of args only). Throws `InvalidQueryError` /
 * `InvalidCursorError` before reading anything.
 */
export async function findSchedulePage(db: SqlExecutor, filter: unknown, options: FindOptions | undefined, select?: Sql): Promise<{ rows: Row[]; nextCursor: string | null }> {
  const f = normalizeScheduleFilter(filter);
  const { limit, cursor } = normalizePageOptions(options);
  const text = scheduleFilterText(f);
  const after = cursor === null ? null : decodeKeyCursor(cursor, text);
  const rows = await schedulesPage(db, f, after, limit, select);
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: rows.length > limit ? encodeKeyCursor(String(page[page.length - 1].name), text) : null };
}

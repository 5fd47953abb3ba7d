import { sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { takeBatch } from '../finalize/take-batch';
import { decodeKeyCursor, encodeKeyCursor } from '../query/find-cursor';
import { normalizePageOptions, type FindOptions } from '../query/job-filter';
import { MAX_FIND_PAGE_BYTES } from '../query/read-page';
import { normalizeScheduleFilter, scheduleFilterText } from './schedule-filter';
import { schedulesByName, schedulesPage, weighSchedules, type ScheduleSize, type StoredSchedule } from './schedules.sql';

/** Characters of args and job options per statement that reads whole schedules. */
export const SCHEDULE_READ_CHARS = 8 * 1024 * 1024;

/**
 * `findSchedules`' filter, pages and cursors, reading `select` (`name` among it; the dashboard's
 * table reads the start of args only). Throws `InvalidQueryError` / `InvalidCursorError` before
 * reading anything.
 */
export async function findSchedulePage(db: SqlExecutor, filter: unknown, options: FindOptions | undefined, select: Sql): Promise<{ rows: Row[]; nextCursor: string | null }> {
  const f = normalizeScheduleFilter(filter);
  const { limit, cursor } = normalizePageOptions(options);
  const text = scheduleFilterText(f);
  const after = cursor === null ? null : decodeKeyCursor(cursor, text);
  const rows = await schedulesPage(db, f, after, limit, select);
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: rows.length > limit ? encodeKeyCursor(String(page[page.length - 1].name), text) : null };
}

/**
 * A page of whole schedules holding at most MAX_FIND_PAGE_BYTES of args (its first schedule
 * always): 500 schedules of 1 MB args were one statement of 500 MB, 1 GB of heap, and a stall of
 * the event loop of 3 s (PostgreSQL) to 9 s (SQLite). A page cut short by it ends its cursor at
 * its last schedule, so the next page goes on from there.
 */
export async function findWholeSchedulesPage(db: SqlExecutor, filter: unknown, options: FindOptions | undefined): Promise<{ schedules: StoredSchedule[]; nextCursor: string | null }> {
  const f = normalizeScheduleFilter(filter);
  const { limit, cursor } = normalizePageOptions(options);
  const text = scheduleFilterText(f);
  const after = cursor === null ? null : decodeKeyCursor(cursor, text);
  const names = (await schedulesPage(db, f, after, limit, sql`name`)).map((r) => String(r.name));
  const page = await weighSchedules(db, names.slice(0, limit), MAX_FIND_PAGE_BYTES);
  if (!page.length) return { schedules: [], nextCursor: null };
  const last = page[page.length - 1].name;
  const more = names.length > limit || last !== names[Math.min(limit, names.length) - 1];
  return { schedules: await readWholeSchedules(db, page), nextCursor: more ? encodeKeyCursor(last, text) : null };
}

/**
 * Whole schedules, in the order given, about SCHEDULE_READ_CHARS per statement, with a turn of
 * the event loop between (SQLite reads on it). One deleted meanwhile is left out.
 */
export async function readWholeSchedules(db: SqlExecutor, sized: readonly ScheduleSize[]): Promise<StoredSchedule[]> {
  const queue = [...sized];
  const schedules: StoredSchedule[] = [];
  while (queue.length) {
    const slice = takeBatch(queue, queue.length, SCHEDULE_READ_CHARS, (s) => s.chars);
    schedules.push(...(await schedulesByName(db, slice.map((s) => s.name))));
    if (queue.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return schedules;
}

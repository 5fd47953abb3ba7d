import { sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { takeBatch } from '../finalize/take-batch';
import { decodeKeyCursor, encodeKeyCursor } from '../query/find-cursor';
import { normalizePageOptions, type FindOptions } from '../query/job-filter';
import { MAX_FIND_PAGE_BYTES } from '../query/read-page';
import { normalizeScheduleFilter, scheduleFilterText, type NormalizedScheduleFilter } from './schedule-filter';
import { scheduleSizesAfter, schedulesBetween, schedulesPage, type ScheduleSize, type StoredSchedule } from './schedules.sql';

/** Characters of args and job options per statement that reads whole schedules. */
export const SCHEDULE_READ_CHARS = 8 * 1024 * 1024;

/** Schedules per page of `listSchedules`, which reads them all page by page. */
const LIST_PAGE = 500;

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
 * the event loop of 2.5 s (PostgreSQL) to 6 s (SQLite). A page cut short by it ends its cursor
 * at its last schedule, so the next page goes on from there.
 */
export async function findWholeSchedulesPage(db: SqlExecutor, filter: unknown, options: FindOptions | undefined): Promise<{ schedules: StoredSchedule[]; nextCursor: string | null }> {
  const f = normalizeScheduleFilter(filter);
  const { limit, cursor } = normalizePageOptions(options);
  const text = scheduleFilterText(f);
  const after = cursor === null ? null : decodeKeyCursor(cursor, text);
  const { sized, more } = await weighPage(db, f, after, limit);
  const schedules = await readWholeSchedules(db, f, sized);
  return { schedules, nextCursor: more && sized.length ? encodeKeyCursor(sized[sized.length - 1].name, text) : null };
}

/** Every schedule, page by page (see findWholeSchedulesPage). */
export async function listWholeSchedules(db: SqlExecutor): Promise<StoredSchedule[]> {
  const all: StoredSchedule[] = [];
  for (let after: string | null = null; ; ) {
    const { sized, more } = await weighPage(db, {}, after, LIST_PAGE);
    all.push(...(await readWholeSchedules(db, {}, sized)));
    if (!more || !sized.length) return all;
    after = sized[sized.length - 1].name;
  }
}

/**
 * Up to `limit` schedules after `after` whose whole reads add up to MAX_FIND_PAGE_BYTES at most
 * (the first always), and whether more follow. PostgreSQL and SQLite weigh from stored sizes, the
 * page and one more at once; MySQL measures a value by reading it (501 schedules of 1 MB args
 * took 4-5 s to weigh), so there a few at a time, twice as many each time, until the budget is spent.
 */
async function weighPage(db: SqlExecutor, f: NormalizedScheduleFilter, after: string | null, limit: number): Promise<{ sized: ScheduleSize[]; more: boolean }> {
  const sized: ScheduleSize[] = [];
  let total = 0;
  let step = db.dialect.name === 'mysql' ? 8 : limit + 1;
  for (let from = after; ; step *= 2) {
    const want = Math.min(step, limit + 1 - sized.length);
    const part = await scheduleSizesAfter(db, f, from, want);
    for (const s of part) {
      if (sized.length === limit || (sized.length && total + s.chars > MAX_FIND_PAGE_BYTES)) return { sized, more: true };
      sized.push(s);
      total += s.chars;
    }
    if (part.length < want) return { sized, more: false };
    from = part[part.length - 1].name;
  }
}

/**
 * The whole rows of weighed schedules, in order: about SCHEDULE_READ_CHARS per statement (a
 * range of names), with a turn of the event loop between (SQLite reads on it). One deleted
 * meanwhile is left out, one added meanwhile inside a range too (it was not weighed).
 */
async function readWholeSchedules(db: SqlExecutor, f: NormalizedScheduleFilter, sized: readonly ScheduleSize[]): Promise<StoredSchedule[]> {
  const queue = [...sized];
  const schedules: StoredSchedule[] = [];
  while (queue.length) {
    const slice = takeBatch(queue, queue.length, SCHEDULE_READ_CHARS, (s) => s.chars);
    const weighed = new Set(slice.map((s) => s.name));
    const read = await schedulesBetween(db, f, slice[0].name, slice[slice.length - 1].name);
    for (const s of read) if (weighed.has(s.name)) schedules.push(s);
    if (queue.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return schedules;
}

import { jobColumns, jobColumnsWithin } from '../database/job-row';
import { sql, type Sql } from '../database/sql';
import { takeBatch } from '../finalize/take-batch';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { decodeCursor, encodeCursor } from './find-cursor';
import {
  argsProbeSize,
  argsProbeStatement,
  findColumnsStatement,
  needsWindow,
  SCAN_WINDOW,
  usesArgsProbe,
  windowExtentStatement,
  windowSlicesStatement,
  type PageRange,
} from './find-jobs.sql';
import { canonicalFilter, normalizeFilter, normalizePageOptions, type FindOptions, type NormalizedFilter } from './job-filter';

export interface RawPage {
  /** At most `limit` rows, newest first. */
  rows: Row[];
  /** The next page starts below this id; null when nothing is left. */
  nextBefore: number | null;
}

/**
 * `find` up to the rows: validates the filter and options, checks the cursor against the filter,
 * reads one page of `columns` (whole job rows by default) and issues the next cursor. Throws
 * `InvalidQueryError` / `InvalidCursorError` before reading anything.
 */
export async function findPage(db: SqlExecutor, filter: unknown, options: FindOptions | undefined, columns?: Sql): Promise<{ rows: Row[]; nextCursor: string | null }> {
  const f = normalizeFilter(filter);
  const { limit, cursor } = normalizePageOptions(options);
  const text = canonicalFilter(f);
  const before = cursor === null ? null : decodeCursor(cursor, text);
  const page = await readPage(db, f, before, limit, columns);
  return { rows: page.rows, nextCursor: page.nextBefore === null ? null : encodeCursor(page.nextBefore, text) };
}

/**
 * Bytes of args and results one `find` page holds at most (its newest job always): 500 jobs of
 * 1 MB args and results were one statement of 1 GB. A page cut short by it ends its cursor at its
 * last job, so the next page goes on from there.
 */
export const MAX_FIND_PAGE_BYTES = 64 * 1024 * 1024;

/** Bytes of large args and results per statement that reads them after the page. */
const FIND_READ_BYTES = 8 * 1024 * 1024;

/**
 * `find` with whole rows. One statement in the common case: the page with args and results of
 * at most their share of MAX_FIND_PAGE_BYTES each, and every row's stored size. Larger ones are
 * read after it by id, about FIND_READ_BYTES per statement (a turn of the event loop between,
 * for SQLite), for the newest rows that fit the page's bytes. Such a value is read after its
 * row: a job that changed in between shows its row as the page matched it with its values of now.
 */
export async function findJobsPage(db: SqlExecutor, filter: unknown, options: FindOptions | undefined): Promise<{ rows: Row[]; nextCursor: string | null }> {
  const f = normalizeFilter(filter);
  const { limit, cursor } = normalizePageOptions(options);
  const text = canonicalFilter(f);
  const before = cursor === null ? null : decodeCursor(cursor, text);
  const share = Math.floor(MAX_FIND_PAGE_BYTES / (limit + 1));
  const page = await readPage(db, f, before, limit, jobColumnsWithin(db.dialect, share));
  const sizeOf = (r: Row) => Number(r.stored_bytes ?? 0);
  const rows = takeBatch([...page.rows], page.rows.length, MAX_FIND_PAGE_BYTES, sizeOf);
  const nextBefore = rows.length < page.rows.length ? Number(rows[rows.length - 1].id) : page.nextBefore;
  const large = rows.filter((r) => sizeOf(r) > share);
  const gone = new Set<number>();
  while (large.length) {
    const slice = takeBatch(large, large.length, FIND_READ_BYTES, sizeOf);
    const { rows: values } = await db.run(sql`SELECT id, args, result FROM jobs WHERE id IN (${sql.list(slice.map((r) => Number(r.id)))})`);
    const byId = new Map(values.map((v) => [Number(v.id), v]));
    for (const r of slice) {
      const v = byId.get(Number(r.id));
      if (v) Object.assign(r, { args: v.args, result: v.result });
      else gone.add(Number(r.id)); // removed since the page was read
    }
    if (large.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return { rows: gone.size ? rows.filter((r) => !gone.has(Number(r.id))) : rows, nextCursor: nextBefore === null ? null : encodeCursor(nextBefore, text) };
}

/**
 * One keyset page of a filter (`columns`: whole job rows by default, `id` among them). Indexed
 * filters: one statement, `limit + 1` rows. Filters with a scanned condition: the window's
 * extent first, then the page within it; a page may then hold fewer than `limit` jobs (even
 * none) while `nextBefore` says more rows remain below.
 */
export async function readPage(db: SqlExecutor, f: NormalizedFilter, beforeId: number | null, limit: number, columns: Sql = jobColumns(db.dialect)): Promise<RawPage> {
  let range: PageRange = { beforeId };
  let windowFull = false;
  if (needsWindow(db.dialect, f) && db.dialect.name === 'sqlite') return readSqliteWindow(db, f, beforeId, limit, columns);
  if (needsWindow(db.dialect, f)) {
    const { rows: [extent] } = await db.run(windowExtentStatement(db.dialect, f, beforeId));
    const n = Number(extent?.n ?? 0);
    if (!n) return { rows: [], nextBefore: null };
    range = { lo: Number(extent.lo), hi: Number(extent.hi) };
    windowFull = n >= SCAN_WINDOW;
  } else if (usesArgsProbe(db.dialect, f)) {
    const size = argsProbeSize(limit);
    const { rows: [probe] } = await db.run(argsProbeStatement(db.dialect, f, beforeId, size));
    const probed = Number(probe?.n ?? 0);
    if (!probed) return { rows: [], nextBefore: null };
    // Dense (a full page among the probed rows) or nothing below them: the page lies in that range.
    if (Number(probe.hits) > limit || probed < size) range = { lo: Number(probe.lo), hi: beforeId === null ? Number.MAX_SAFE_INTEGER : beforeId - 1 };
    else range = { beforeId, sparse: true };
  }
  const { rows } = await db.run(findColumnsStatement(db.dialect, f, range, limit, columns));
  if (rows.length > limit) return { rows: rows.slice(0, limit), nextBefore: Number(rows[limit - 1].id) };
  return { rows, nextBefore: windowFull ? (range as { lo: number }).lo : null };
}

/**
 * SQLite: a window of scanned filters slice by slice (see SQLITE_SCAN_SLICE_BYTES), newest
 * first, yielding the event loop between slices, until a page and one more row are read.
 */
async function readSqliteWindow(db: SqlExecutor, f: NormalizedFilter, beforeId: number | null, limit: number, columns: Sql): Promise<RawPage> {
  const { rows: slices } = await db.run(windowSlicesStatement(db.dialect, f, beforeId));
  const rows: Row[] = [];
  let n = 0;
  for (const [i, slice] of slices.entries()) {
    n += Number(slice.n);
    if (i) await new Promise((resolve) => setImmediate(resolve));
    const range = { lo: Number(slice.lo), hi: Number(slice.hi) };
    rows.push(...(await db.run(findColumnsStatement(db.dialect, f, range, limit - rows.length, columns))).rows);
    if (rows.length > limit) return { rows: rows.slice(0, limit), nextBefore: Number(rows[limit - 1].id) };
  }
  // Every slice read: more rows lie below the window only if it was full.
  return { rows, nextBefore: n >= SCAN_WINDOW ? Number(slices[slices.length - 1].lo) : null };
}

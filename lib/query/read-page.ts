import { jobColumns } from '../database/job-row';
import type { Sql } from '../database/sql';
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

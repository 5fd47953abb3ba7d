import type { Row, SqlExecutor } from '../database/sql-executor';
import {
  argsProbeSize,
  argsProbeStatement,
  findIdsStatement,
  findPageStatement,
  needsWindow,
  SCAN_WINDOW,
  usesArgsProbe,
  windowExtentStatement,
  type PageRange,
} from './find-jobs.sql';
import type { NormalizedFilter } from './job-filter';

export interface RawPage {
  /** At most `limit` rows, newest first. */
  rows: Row[];
  /** The next page starts below this id; null when nothing is left. */
  nextBefore: number | null;
}

/**
 * One keyset page of a filter. Indexed filters: one statement, `limit + 1` rows. Filters with
 * a scanned condition: the window's extent first, then the page within it; a page may then
 * hold fewer than `limit` jobs (even none) while `nextBefore` says more rows remain below.
 */
export async function readPage(db: SqlExecutor, f: NormalizedFilter, beforeId: number | null, limit: number, idsOnly = false): Promise<RawPage> {
  const statement = idsOnly ? findIdsStatement : findPageStatement;
  let range: PageRange = { beforeId };
  let windowFull = false;
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
  const { rows } = await db.run(statement(db.dialect, f, range, limit));
  if (rows.length > limit) return { rows: rows.slice(0, limit), nextBefore: Number(rows[limit - 1].id) };
  return { rows, nextBefore: windowFull ? (range as { lo: number }).lo : null };
}

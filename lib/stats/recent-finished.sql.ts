import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';

export interface RecentFinished {
  done: number;
  failed: number;
  /** Mean started → finished ms of the done jobs (null when none had a start). */
  meanDurationMs: number | null;
}

/**
 * SQLite: finished rows one slice of the recent window counts. better-sqlite3 runs a statement on
 * the event loop: one count of an hour's 1,000,000 finished jobs held it for about 400 ms.
 */
export const SQLITE_RECENT_SLICE = 10_000;

/**
 * SQLite: the args and results one slice may span. A SQLite row stores `state` and the times
 * after them, so reading those walks their overflow pages: 5,000 jobs of 100 KB args and result
 * made one 236 ms slice. A slice ends at this many bytes (plus the row that crosses it).
 */
export const SQLITE_RECENT_SLICE_BYTES = 16 * 1024 * 1024;

/** Done and failed jobs finished within `windowMs` of the database clock: exact, read through jobs_finished_idx. */
export async function readRecentFinished(db: SqlExecutor, windowMs: number): Promise<RecentFinished> {
  if (db.dialect.name === 'sqlite') return readSliced(db, windowMs);
  const d = db.dialect;
  const { rows } = await db.run(sql`SELECT SUM(CASE WHEN state = 'done' THEN 1 ELSE 0 END) AS done, SUM(CASE WHEN state = 'failed' THEN 1 ELSE 0 END) AS failed,
      SUM(CASE WHEN state = 'done' THEN ${d.diffMs(sql`started_at`, sql`finished_at`)} END) AS ms,
      COUNT(CASE WHEN state = 'done' THEN started_at END) AS timed
    FROM jobs WHERE finished_at >= ${d.addMs(d.now(), -windowMs)} AND state IN ('done', 'failed')`);
  return toRecent([rows[0] ?? {}]);
}

/**
 * SQLite: slices of up to SQLITE_RECENT_SLICE finished rows and SQLITE_RECENT_SLICE_BYTES of their
 * values, in (finished_at, rowid) order, with a turn of the event loop between; the window starts
 * where the first slice read the clock.
 */
async function readSliced(db: SqlExecutor, windowMs: number): Promise<RecentFinished> {
  const { rows: clock } = await db.run(sql`SELECT ${db.dialect.addMs(db.dialect.now(), -windowMs)} AS since`);
  const since = String(clock[0].since);
  const parts: Array<Record<string, unknown>> = [];
  let after: { at: string; id: number } | null = null;
  for (;;) {
    const { rows: sized } = await db.run(sqliteRecentSliceRows(since, after));
    const fit = Number(sized[0]?.fit ?? 0);
    if (!fit) break;
    const { rows } = await db.run(sqliteRecentSlice(since, after, fit));
    const slice = rows[0] ?? {};
    parts.push(slice);
    // The last slice: every row left fitted, and there were fewer than a slice's worth.
    if (Number(slice.n ?? 0) < fit || (fit === Number(sized[0].n) && fit < SQLITE_RECENT_SLICE)) break;
    after = { at: String(slice.last_at), id: Number(slice.last_id) };
    await new Promise((resolve) => setImmediate(resolve));
  }
  return toRecent(parts);
}

/** The next rows of the window in slice order: where they are (see sqliteRecentSlice). */
function nextRows(since: string, after: { at: string; id: number } | null, columns: Sql, limit: number): Sql {
  return sql`SELECT ${columns} FROM jobs INDEXED BY jobs_finished_idx
      WHERE finished_at >= ${after ? after.at : since}${after ? sql` AND (finished_at, rowid) > (${after.at}, ${after.id})` : sql``}
      ORDER BY finished_at, rowid LIMIT ${limit}`;
}

/**
 * How many of the next SQLITE_RECENT_SLICE rows (`n`) the next slice takes (`fit`): up to
 * SQLITE_RECENT_SLICE_BYTES of args and results, at least one row. The sizes come from the
 * record headers (octet_length), read in index order without a sort.
 */
export function sqliteRecentSliceRows(since: string, after: { at: string; id: number } | null): Sql {
  const rows = nextRows(since, after, sql`rowid AS rid, finished_at, octet_length(args) + COALESCE(octet_length(result), 0) AS b`, SQLITE_RECENT_SLICE);
  return sql`SELECT COUNT(*) AS n, SUM(s.before < ${SQLITE_RECENT_SLICE_BYTES}) AS fit FROM (
      SELECT SUM(w.b) OVER (ORDER BY w.finished_at, w.rid ROWS UNBOUNDED PRECEDING) - w.b AS before FROM (${rows}) w) s`;
}

/**
 * One slice: its counts, and the (finished_at, rowid) of its last row, where the next one starts
 * (the plain `finished_at >=` bound is what SQLite's index range starts at; the row value only filters).
 */
export function sqliteRecentSlice(since: string, after: { at: string; id: number } | null, limit = SQLITE_RECENT_SLICE): Sql {
  const d = sql`((julianday(finished_at) - julianday(started_at)) * 86400000.0)`;
  return sql`WITH t AS MATERIALIZED (${nextRows(since, after, sql`rowid AS rid, state, started_at, finished_at`, limit)})
    SELECT COUNT(*) AS n, SUM(state = 'done') AS done, SUM(state = 'failed') AS failed,
      SUM(CASE WHEN state = 'done' THEN ${d} END) AS ms, COUNT(CASE WHEN state = 'done' THEN started_at END) AS timed,
      MAX(finished_at) AS last_at, (SELECT MAX(rid) FROM t WHERE finished_at = (SELECT MAX(finished_at) FROM t)) AS last_id
    FROM t`;
}

function toRecent(parts: ReadonlyArray<Record<string, unknown>>): RecentFinished {
  let done = 0;
  let failed = 0;
  let ms = 0;
  let timed = 0;
  for (const p of parts) {
    done += Number(p.done ?? 0);
    failed += Number(p.failed ?? 0);
    ms += Number(p.ms ?? 0);
    timed += Number(p.timed ?? 0);
  }
  return { done, failed, meanDurationMs: timed ? Math.round(ms / timed) : null };
}

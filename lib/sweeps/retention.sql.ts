import type { SqlDialect } from '../database/dialects';
import { noJitStatement } from '../database/no-jit.sql';
import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { takeBatch } from '../finalize/take-batch';
import { deleteJobRows, SQLITE_REMOVAL_BATCH_BYTES, sqliteValueBytes, untiedToOpenWork } from '../removal/job-removal.sql';

/**
 * SQLite: the values a retention batch may remove. SQLite frees a large value by walking its
 * overflow pages, in a statement on the event loop and under the write lock: a batch of 500
 * jobs with 1 MB args and results held the loop for about 3 s (and every other process's
 * claims with the lock). `octet_length` reads the sizes from the record headers.
 */
export const SQLITE_RETENTION_BATCH_BYTES = SQLITE_REMOVAL_BATCH_BYTES;


/**
 * Where a retention run goes on: after this row in the batches' order (`finished_at`, id). The
 * rows before it were removed or are held (tied to unfinished work, or locked), so the next batch
 * starts after it instead of stepping over every held row again: 100,000 finished children of an
 * open container made each batch look them all up (a run removing 50,000 jobs behind them: 15 s
 * on PostgreSQL, 2 s now). Rows freed meanwhile are removed at the next run. `finishedAt` is the database's
 * exact text of the time (PostgreSQL keeps microseconds, which a Date would round away).
 */
export interface RetentionCursor {
  finishedAt: string;
  id: number;
}

export interface RetentionBatch {
  jobs: number;
  keyRows: number;
  /** A full batch, or one SQLite cut at SQLITE_RETENTION_BATCH_BYTES: more may be due. */
  more: boolean;
  /** SQLite: the bytes of the removed rows' args, results and errors (0 elsewhere). */
  bytes: number;
  /** The last removed row: the next batch of this run starts after it (null: none removed). */
  last: RetentionCursor | null;
}

/**
 * Removes (or archives) one batch of finished jobs older than `olderThanMs`, oldest first.
 * A job stays while anything it is directly tied to is unfinished: a dependent that may still
 * read its result through `ctx.upstream()`, an upstream still running, or its container; and
 * while its throttle window is open, since the enqueues in that window return it.
 * Edges go with their jobs, so `job_deps` only ever joins live rows, and so do the
 * `job_queue_keys` rows of the keys they held, unless a throttle window is still open or an
 * enqueue of the key holds the row (see deleteIdleKeyRows; the key sweep finds those later).
 */
export async function removeFinishedJobs(
  tx: SqlExecutor,
  olderThanMs: number,
  batch: number,
  archive: boolean,
  after: RetentionCursor | null = null,
): Promise<RetentionBatch> {
  const d = tx.dialect;
  const cutoff = d.addMs(d.now(), -olderThanMs);
  const lock = d.name === 'sqlite' ? sql`` : sql` FOR UPDATE SKIP LOCKED`;
  // SQLite: `+j.state` keeps the state index out, so the batch walks jobs_finished_idx oldest
  // first and stops at its limit. Through the state index it read the finish time of every
  // finished job, then sorted them: each read walks the row's large values (see
  // retention-limit.ts), so every batch cost as much as all finished jobs' values.
  const finishedState = d.name === 'sqlite' ? sql`+j.state` : sql`j.state`;
  // PostgreSQL: `OFFSET 0` keeps each NOT EXISTS a lookup per candidate row. As anti-joins, a
  // table of finished jobs (statistics: hardly any open job) got each of the three checks on
  // `jobs` planned as a scan of the whole table, per batch: 1 s a batch of 500 at 1,000,000
  // jobs (2,000 batches to remove them), 14 ms as lookups. Their cost, counted over every finished
  // row the batch might walk, then passes jit_above_cost: 0.3 s of compiling, so JIT is off.
  if (d.name === 'postgres') await tx.run(noJitStatement());
  const { rows: due } = await tx.run(sql`SELECT j.id, j.job_key, ${finishedText(d)} AS finished_text FROM jobs j
    WHERE j.finished_at < ${cutoff}${afterCursor(d, after)} AND ${finishedState} IN ('done', 'failed', 'cancelled')
      AND ${untiedToOpenWork(tx)}
    ORDER BY j.finished_at, j.id LIMIT ${batch}${lock}`);
  if (!due.length) return { jobs: 0, keyRows: 0, more: false, bytes: 0, last: null };
  const selected = due.length;
  const sizeOf = d.name === 'sqlite' ? await sqliteValueBytes(tx, due) : undefined;
  const rows = sizeOf ? takeBatch(due, batch, SQLITE_RETENTION_BATCH_BYTES, sizeOf) : due;
  const more = selected === batch || rows.length < selected;
  const bytes = sizeOf ? rows.reduce((sum, r) => sum + sizeOf(r), 0) : 0;
  const removed = await deleteJobRows(tx, rows, archive);
  const tail = rows[rows.length - 1];
  const last = { finishedAt: String(tail.finished_text), id: Number(tail.id) };
  return { ...removed, more, bytes, last };
}

/** `finished_at` as text that compares back exactly (see RetentionCursor); ISO 8601 on PostgreSQL, whatever its DateStyle. */
function finishedText(d: SqlDialect): Sql {
  if (d.name === 'postgres') return sql`to_char(j.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  return d.name === 'mysql' ? sql`CAST(j.finished_at AS CHAR)` : sql`j.finished_at`;
}

/** Rows after the cursor in (finished_at, id) order, as a range of jobs_finished_idx. */
function afterCursor(d: SqlDialect, after: RetentionCursor | null): Sql {
  if (!after) return sql``;
  const at = d.name === 'postgres' ? sql`${after.finishedAt}::timestamptz` : sql`${after.finishedAt}`;
  return sql` AND j.finished_at >= ${at} AND (j.finished_at > ${at} OR j.id > ${after.id})`;
}

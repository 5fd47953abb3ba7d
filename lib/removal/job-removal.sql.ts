import { inChunks, skewedListChunk } from '../database/in-chunks';
import { sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { deleteIdleKeyRows, nowMs } from '../enqueue/job-keys.sql';

const OPEN = `'waiting', 'ready', 'leased', 'running'`;
const JOB_COLUMNS = `id, type, ref, args, result, state, parent_id, is_container, pending_deps, pending_children,
  failed_children, group_key, weight, priority, lease_owner, lease_expires, heartbeat_at, run_after, attempts,
  max_attempts, last_error, timeout_ms, progress, current_stage, job_key, created_at, started_at, finished_at, updated_at`;

/** The finished states: the only jobs retention and `remove` take. */
export const FINISHED_STATES = ['done', 'failed', 'cancelled'] as const;

/**
 * The condition on `jobs j` that nothing the job is directly tied to is unfinished: a dependent
 * that may still read its result through `ctx.upstream()`, an upstream still running, or its
 * container; and that its key's throttle window is closed, since the enqueues in that window
 * return it. Each check is an index lookup per row (PostgreSQL: `OFFSET 0`, see retention.sql.ts).
 */
export function untiedToOpenWork(tx: SqlExecutor): Sql {
  const probe = sql.raw(tx.dialect.name === 'postgres' ? ' OFFSET 0' : '');
  return sql`NOT EXISTS (SELECT 1 FROM job_deps dd JOIN jobs x ON x.id = dd.job_id WHERE dd.depends_on_id = j.id AND x.state IN (${sql.raw(OPEN)})${probe})
      AND NOT EXISTS (SELECT 1 FROM job_deps du JOIN jobs u ON u.id = du.depends_on_id WHERE du.job_id = j.id AND u.state IN (${sql.raw(OPEN)})${probe})
      AND NOT EXISTS (SELECT 1 FROM jobs p WHERE p.id = j.parent_id AND p.state IN (${sql.raw(OPEN)})${probe})
      AND NOT EXISTS (SELECT 1 FROM job_queue_keys k WHERE k.job_key = j.job_key AND k.window_ends_ms > ${nowMs(tx)}${probe})`;
}

/**
 * Deletes (or archives) locked, finished jobs `rows` (`id`, `job_key`), their edges, and the
 * `job_queue_keys` rows of the keys they held unless a throttle window is still open or an
 * enqueue of the key holds the row (see deleteIdleKeyRows; the key sweep finds those later).
 */
export async function deleteJobRows(tx: SqlExecutor, rows: readonly Row[], archive: boolean): Promise<{ jobs: number; keyRows: number }> {
  if (!rows.length) return { jobs: 0, keyRows: 0 };
  const d = tx.dialect;
  const ids = sql.list(rows.map((r) => Number(r.id)));
  if (archive) {
    await tx.run(sql`INSERT INTO jobs_archive (${sql.raw(JOB_COLUMNS)}, archived_at)
      SELECT ${sql.raw(JOB_COLUMNS)}, ${d.now()} FROM jobs WHERE id IN (${ids})`);
    await tx.run(sql`INSERT INTO job_deps_archive (job_id, depends_on_id, allow_failure)
      SELECT job_id, depends_on_id, allow_failure FROM job_deps WHERE job_id IN (${ids})`);
  }
  // Explicitly, rather than through ON DELETE CASCADE: a SQLite connection may run without foreign
  // keys. In slices: on MySQL a longer list read (and locked) the whole of job_deps, see skewedListChunk.
  await inChunks(tx, rows.map((r) => Number(r.id)), (list) => sql`DELETE FROM job_deps WHERE job_id IN (${list}) OR depends_on_id IN (${list})`, skewedListChunk(d));
  // Their log lines too (archived jobs keep none): job_logs has no foreign key, see its migration.
  await inChunks(tx, rows.map((r) => Number(r.id)), (list) => sql`DELETE FROM job_logs WHERE job_id IN (${list})`, skewedListChunk(d));
  const { affected } = await tx.run(sql`DELETE FROM jobs WHERE id IN (${ids})`);
  // The rows are locked: these keys' holders were these jobs, and are gone now.
  const keys = rows.filter((r) => r.job_key != null).map((r) => String(r.job_key));
  return { jobs: affected, keyRows: await deleteIdleKeyRows(tx, keys) };
}

/**
 * SQLite: the bytes of each row's large values and log lines (with a row's overhead), by id. SQLite frees a large value by walking its
 * overflow pages, in a statement on the event loop and under the write lock, so removals are cut
 * by bytes there (1 MB args and results: a batch of 500 held the loop for about 3 s). A statement
 * of its own: where a query sorts, SQLite loaded the values that `octet_length` otherwise reads
 * from the record header (85 ms a batch of 1 MB rows against under 1 ms).
 */
export async function sqliteValueBytes(tx: SqlExecutor, rows: readonly Row[]): Promise<(row: Row) => number> {
  // Log lines count too: 500 jobs of 1,000 lines each were 500,000 rows deleted on the event loop.
  const { rows: sizes } = await tx.run(sql`SELECT id, COALESCE(octet_length(args), 0) + COALESCE(octet_length(result), 0) + COALESCE(octet_length(last_error), 0)
      + COALESCE((SELECT SUM(octet_length(message) + 40) FROM job_logs WHERE job_logs.job_id = jobs.id), 0) AS bytes
    FROM jobs WHERE id IN (${sql.list(rows.map((r) => Number(r.id)))})`);
  const bytes = new Map(sizes.map((r) => [Number(r.id), Number(r.bytes)]));
  return (row) => bytes.get(Number(row.id)) ?? 0;
}

/** At most this many bytes of values freed per SQLite transaction (see sqliteValueBytes). */
export const SQLITE_REMOVAL_BATCH_BYTES = 8 * 1024 * 1024;

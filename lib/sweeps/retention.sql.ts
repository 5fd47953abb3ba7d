import { inChunks, skewedListChunk } from '../database/in-chunks';
import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { deleteIdleKeyRows, nowMs } from '../enqueue/job-keys.sql';

const JOB_COLUMNS = `id, type, ref, args, result, state, parent_id, is_container, pending_deps, pending_children,
  failed_children, group_key, weight, priority, lease_owner, lease_expires, heartbeat_at, run_after, attempts,
  max_attempts, last_error, timeout_ms, progress, current_stage, job_key, created_at, started_at, finished_at, updated_at`;
const OPEN = `'waiting', 'ready', 'leased', 'running'`;

/**
 * Removes (or archives) one batch of finished jobs older than `olderThanMs`, oldest first.
 * A job stays while anything it is directly tied to is unfinished: a dependent that may still
 * read its result through `ctx.upstream()`, an upstream still running, or its container; and
 * while its throttle window is open, since the enqueues in that window return it.
 * Edges go with their jobs, so `job_deps` only ever joins live rows, and so do the
 * `job_queue_keys` rows of the keys they held, unless a throttle window is still open or an
 * enqueue of the key holds the row (see deleteIdleKeyRows; the key sweep finds those later).
 * Returns how many jobs, and how many key rows, were removed.
 */
export async function removeFinishedJobs(
  tx: SqlExecutor,
  olderThanMs: number,
  batch: number,
  archive: boolean,
): Promise<{ jobs: number; keyRows: number }> {
  const d = tx.dialect;
  const cutoff = d.addMs(d.now(), -olderThanMs);
  const lock = d.name === 'sqlite' ? sql`` : sql` FOR UPDATE SKIP LOCKED`;
  const { rows } = await tx.run(sql`SELECT j.id, j.job_key FROM jobs j
    WHERE j.finished_at < ${cutoff} AND j.state IN ('done', 'failed', 'cancelled')
      AND NOT EXISTS (SELECT 1 FROM job_deps dd JOIN jobs x ON x.id = dd.job_id WHERE dd.depends_on_id = j.id AND x.state IN (${sql.raw(OPEN)}))
      AND NOT EXISTS (SELECT 1 FROM job_deps du JOIN jobs u ON u.id = du.depends_on_id WHERE du.job_id = j.id AND u.state IN (${sql.raw(OPEN)}))
      AND NOT EXISTS (SELECT 1 FROM jobs p WHERE p.id = j.parent_id AND p.state IN (${sql.raw(OPEN)}))
      AND NOT EXISTS (SELECT 1 FROM job_queue_keys k WHERE k.job_key = j.job_key AND k.window_ends_ms > ${nowMs(tx)})
    ORDER BY j.finished_at, j.id LIMIT ${batch}${lock}`);
  if (!rows.length) return { jobs: 0, keyRows: 0 };
  const ids = sql.list(rows.map((r) => Number(r.id)));
  if (archive) {
    await tx.run(sql`INSERT INTO jobs_archive (${sql.raw(JOB_COLUMNS)}, archived_at)
      SELECT ${sql.raw(JOB_COLUMNS)}, ${d.now()} FROM jobs WHERE id IN (${ids})`);
    await tx.run(sql`INSERT INTO job_deps_archive (job_id, depends_on_id)
      SELECT job_id, depends_on_id FROM job_deps WHERE job_id IN (${ids})`);
  }
  // Explicitly, rather than through ON DELETE CASCADE: a SQLite connection may run without foreign
  // keys. In slices: on MySQL a longer list read (and locked) the whole of job_deps, see skewedListChunk.
  await inChunks(tx, rows.map((r) => Number(r.id)), (list) => sql`DELETE FROM job_deps WHERE job_id IN (${list}) OR depends_on_id IN (${list})`, skewedListChunk(d));
  const { affected } = await tx.run(sql`DELETE FROM jobs WHERE id IN (${ids})`);
  // The rows are locked: these keys' holders were these jobs, and are gone now.
  const keys = rows.filter((r) => r.job_key != null).map((r) => String(r.job_key));
  return { jobs: affected, keyRows: await deleteIdleKeyRows(tx, keys) };
}

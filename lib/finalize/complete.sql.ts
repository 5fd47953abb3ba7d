import { sql, type Sql } from '../database/sql';
import { NOTIFY_CHANNEL } from '../notify/notify.sql';
import type { SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';
import { toSettled, type SettledJob } from './settled-job';

export interface Completion {
  id: number;
  resultJson: string;
  /** The job's container, known from the claim (a job's parent never changes). */
  parentId: number | null;
}

/**
 * Writes `done` + result for a batch of this worker's jobs. The guard
 * `lease_owner = me AND state = 'running'` is what makes finalize exactly-once: a job that was
 * reclaimed, cancelled or timed out by a sweep no longer matches and is left alone.
 * Returns the rows that passed the guard.
 */
export async function completeJobs(tx: SqlExecutor, owner: string, items: Completion[]): Promise<SettledJob[]> {
  if (!items.length) return [];
  const d = tx.dialect;
  const now = d.now();
  const sorted = [...items].sort((a, b) => a.id - b.id);
  const common = sql`state = 'done', progress = 100, finished_at = ${now}, lease_owner = NULL, lease_expires = NULL, updated_at = ${now}`;
  if (d.name === 'postgres') {
    const { rows } = await tx.run(sql`UPDATE jobs SET result = v.result, ${common}
      FROM (SELECT unnest(${sorted.map((i) => i.id)}::bigint[]) AS id, unnest(${sorted.map((i) => i.resultJson)}::text[]) AS result) v
      WHERE jobs.id = v.id AND jobs.lease_owner = ${owner} AND jobs.state = 'running'
      RETURNING jobs.id, jobs.parent_id`);
    return rows.map((r) => toSettled(r, 'done'));
  }
  const cases = sql.join(sorted.map((i) => sql`WHEN ${i.id} THEN ${i.resultJson}`), ' ');
  const rows = await updateReturning(
    tx,
    sql`result = CASE id ${cases} END, ${common}`,
    sql`id IN (${sql.list(sorted.map((i) => i.id))}) AND lease_owner = ${owner} AND state = 'running'`,
    sql`id, parent_id`,
  );
  return rows.map((r) => toSettled(r, 'done'));
}

/**
 * PostgreSQL, for batches whose jobs have no container: the guarded complete, the dependents'
 * countdown and promotion, and the NOTIFY, as one statement, so one round trip and one commit
 * per batch with no explicit transaction. It is exactly the transactional path's work:
 * data-modifying CTEs run atomically, and the dependents' UPDATE re-reads a row another
 * finalize changed concurrently (READ COMMITTED re-check), so counters never lose a decrement.
 * Callers rerun it as a whole after a deadlock.
 */
export function completeWithDependentsPostgres(owner: string, items: Completion[], notify: boolean): Sql {
  const sorted = [...items].sort((a, b) => a.id - b.id);
  return sql`WITH done AS (
      UPDATE jobs SET result = v.result, state = 'done', progress = 100, finished_at = now(),
        lease_owner = NULL, lease_expires = NULL, updated_at = now()
      FROM (SELECT unnest(${sorted.map((i) => i.id)}::bigint[]) AS id, unnest(${sorted.map((i) => i.resultJson)}::text[]) AS result) v
      WHERE jobs.id = v.id AND jobs.lease_owner = ${owner} AND jobs.state = 'running'
      RETURNING jobs.id),
    dep AS (
      SELECT d.job_id, COUNT(*) AS n FROM job_deps d JOIN done ON d.depends_on_id = done.id GROUP BY d.job_id),
    promoted AS (
      UPDATE jobs j SET state = CASE WHEN j.state = 'waiting' AND j.is_container = 0 AND j.pending_deps - dep.n <= 0 THEN 'ready' ELSE j.state END,
        pending_deps = j.pending_deps - dep.n, updated_at = now()
      FROM dep WHERE j.id = dep.job_id
      RETURNING j.id, j.state),
    woken AS (
      SELECT pg_notify(${NOTIFY_CHANNEL}, 'r') FROM (SELECT 1 FROM promoted WHERE state = 'ready' AND ${notify} LIMIT 1) p)
    SELECT 'done' AS kind, id FROM done
    UNION ALL SELECT 'ready', id FROM promoted WHERE state = 'ready'
    UNION ALL SELECT 'notified', NULL FROM woken`;
}

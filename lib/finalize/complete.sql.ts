import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';
import { ownedBy } from '../lease/lease-guard.sql';
import { toSettled, type SettledJob } from './settled-job';

export interface Completion {
  id: number;
  resultJson: string;
  /** The job's container, known from the claim (a job's parent never changes). */
  parentId: number | null;
  /** Tracing only (lib/instrumentation): the attempt's carrier, written with the result for dependents to link to. */
  carrier?: string | null;
}

/** Some completion carries a trace context; without tracing the statements are what they always were. */
function hasCarriers(items: readonly Completion[]): boolean {
  for (const i of items) if (i.carrier) return true;
  return false;
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
  const traced = hasCarriers(sorted);
  if (d.name === 'postgres') {
    const carriers = traced
      ? { set: sql`trace_context = COALESCE(v.carrier, jobs.trace_context), `, col: sql`, unnest(${sorted.map((i) => i.carrier ?? null)}::text[]) AS carrier` }
      : { set: sql``, col: sql`` };
    const { rows } = await tx.run(sql`UPDATE jobs SET result = v.result, ${carriers.set}${common}
      FROM (SELECT unnest(${sorted.map((i) => i.id)}::bigint[]) AS id, unnest(${sorted.map((i) => i.resultJson)}::text[]) AS result${carriers.col}) v
      WHERE jobs.id = v.id AND ${ownedBy(d, owner, 'jobs')}
      RETURNING jobs.id, jobs.parent_id`);
    return rows.map((r) => toSettled(r, 'done'));
  }
  const cases = sql.join(sorted.map((i) => sql`WHEN ${i.id} THEN ${i.resultJson}`), ' ');
  const carrierCases = traced ? sql.join(sorted.filter((i) => i.carrier).map((i) => sql`WHEN ${i.id} THEN ${i.carrier}`), ' ') : null;
  const rows = await updateReturning(
    tx,
    sql`result = CASE id ${cases} END, ${carrierCases ? sql`trace_context = CASE id ${carrierCases} ELSE trace_context END, ` : sql``}${common}`,
    sql`id IN (${sql.list(sorted.map((i) => i.id))}) AND ${ownedBy(d, owner)}`,
    sql`id, parent_id`,
  );
  return rows.map((r) => toSettled(r, 'done'));
}

/**
 * PostgreSQL, for batches whose jobs have no container: one call of `job_queue_complete`
 * (migration 5), which does the guarded complete, the dependents' countdown and promotion, and
 * the NOTIFY in one statement, so one round trip and one commit per batch with no explicit
 * transaction. It is exactly the transactional path's work: data-modifying CTEs run
 * atomically, and the dependents' UPDATE re-reads a row another finalize changed concurrently
 * (READ COMMITTED re-check), so counters never lose a decrement. Callers rerun it as a whole
 * after a deadlock. Rows: `refused` per job the guard turned down, one `promoted` count.
 */
export function completeWithDependentsPostgres(owner: string, items: Completion[], notify: boolean): Sql {
  const sorted = [...items].sort((a, b) => a.id - b.id);
  // Traced: the five-argument form (migration 15), which writes each attempt's carrier with its result.
  const carriers = hasCarriers(sorted) ? sql`, ${sorted.map((i) => i.carrier ?? null)}::text[]` : sql``;
  return sql`SELECT kind, job FROM job_queue_complete(${owner}, ${sorted.map((i) => i.id)}::bigint[],
    ${sorted.map((i) => i.resultJson)}::text[], ${notify}${carriers})`;
}

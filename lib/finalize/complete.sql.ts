import type { PostgresClaimArgs } from '../claim/postgres.claim';
import { jobColumns, toJobRecord, toJobView } from '../database/job-row';
import { sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { updateReturning } from '../database/update-returning';
import type { JobView } from '../job.types';
import { ownedBy } from '../lease/lease-guard.sql';
import { readyPayloadOf } from '../notify/notify.sql';
import { completedView } from './completed-view';
import { GuardTurnedDown } from './guard-turned-down';
import { toSettled, type SettledJob } from './settled-job';

export interface Completion {
  id: number;
  resultJson: string;
  /** The job's container, known from the claim (a job's parent never changes). */
  parentId: number | null;
  /** Tracing only (lib/instrumentation): the attempt's carrier, written with the result for dependents to link to. */
  carrier?: string | null;
  /**
   * A `completed` listener wants the job's view: the complete returns it (see completedView), so
   * that the lifecycle need not read it back after the commit.
   */
  wantsView?: boolean;
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
 *
 * `countGuard` (MySQL, which has no RETURNING): the guarded UPDATE alone, without the locking
 * read before it. When it changed every row, every job was this worker's, and each completion
 * already knows its container from the claim; one round trip fewer per finalize batch. When
 * it changed fewer, it throws GuardTurnedDown and the caller writes the batch again without
 * `countGuard`. The UPDATE locks the rows in id order, as the read did (see
 * mysql-renewal-deadlock.spec).
 */
export async function completeJobs(
  tx: SqlExecutor,
  owner: string,
  items: Completion[],
  /** Filled with the views of the completed jobs that want one (Completion.wantsView). */
  views?: Map<number, JobView>,
  countGuard = false,
): Promise<SettledJob[]> {
  if (!items.length) return [];
  const d = tx.dialect;
  const sorted = [...items].sort((a, b) => a.id - b.id);
  const viewed = views !== undefined && sorted.some((i) => i.wantsView);
  const traced = hasCarriers(sorted);
  const cases = d.name === 'postgres' ? undefined : sql.join(sorted.map((i) => sql`WHEN ${i.id} THEN ${i.resultJson}`), ' ');
  const carrierCases = traced && cases ? sql.join(sorted.filter((i) => i.carrier).map((i) => sql`WHEN ${i.id} THEN ${i.carrier}`), ' ') : null;
  const where = sql`id IN (${sql.list(sorted.map((i) => i.id))}) AND ${ownedBy(d, owner)}`;
  // MySQL and SQLite: the results (and carriers) by CASE on id, with the rest of the complete.
  const caseSet = (now: Sql) =>
    sql`result = CASE id ${cases!} END, ${carrierCases ? sql`trace_context = CASE id ${carrierCases} ELSE trace_context END, ` : sql``}${completedSet(now)}`;
  if (countGuard && !viewed && !d.supportsReturning) {
    const { affected } = await tx.run(sql`UPDATE jobs SET ${caseSet(d.now())} WHERE ${where}`);
    if (affected !== sorted.length) throw new GuardTurnedDown(sorted.length, affected);
    return sorted.map((i): SettledJob => ({ id: i.id, parentId: i.parentId, outcome: 'done' }));
  }
  if (viewed && !d.supportsReturning) {
    // MySQL: the locking read returns the rows before the write, and the database's time, which
    // the write then uses, so the views are exactly what a read after the commit would return.
    const { rows } = await tx.run(sql`SELECT ${jobColumns(d)}, ${d.selectTime('UTC_TIMESTAMP(3)')} AS completed_at FROM jobs WHERE ${where} ORDER BY id FOR UPDATE`);
    if (!rows.length) return [];
    const at = String(rows[0].completed_at);
    await tx.run(sql`UPDATE jobs SET ${caseSet(sql`${at}`)} WHERE id IN (${sql.list(rows.map((r) => r.id))})`);
    const byId = new Map(sorted.map((i) => [i.id, i]));
    for (const row of rows) {
      const item = byId.get(Number(row.id))!;
      if (item.wantsView) views.set(item.id, completedView(toJobRecord(row, d), item.resultJson, d.parseTime(at)!));
    }
    return rows.map((r) => toSettled(r, 'done'));
  }
  // RETURNING (PostgreSQL, SQLite) gives the rows as written: the views are the returned rows.
  const returning = viewed ? sql`, ${jobColumns(d, d.name === 'postgres' ? 'jobs' : '')}` : sql``;
  let rows: Row[];
  if (d.name === 'postgres') {
    const carriers = traced
      ? { set: sql`trace_context = COALESCE(v.carrier, jobs.trace_context), `, col: sql`, unnest(${sorted.map((i) => i.carrier ?? null)}::text[]) AS carrier` }
      : { set: sql``, col: sql`` };
    ({ rows } = await tx.run(sql`UPDATE jobs SET result = v.result, ${carriers.set}${completedSet(d.now())}
      FROM (SELECT unnest(${sorted.map((i) => i.id)}::bigint[]) AS id, unnest(${sorted.map((i) => i.resultJson)}::text[]) AS result${carriers.col}) v
      WHERE jobs.id = v.id AND ${ownedBy(d, owner, 'jobs')}
      RETURNING jobs.id, jobs.parent_id${returning}`));
  } else {
    rows = await updateReturning(tx, caseSet(d.now()), where, sql`id, parent_id${returning}`);
  }
  if (viewed) {
    const wanted = new Set(sorted.filter((i) => i.wantsView).map((i) => i.id));
    for (const row of rows) if (wanted.has(Number(row.id))) views.set(Number(row.id), toJobView(toJobRecord(row, d)));
  }
  return rows.map((r) => toSettled(r, 'done'));
}

/** What a complete sets besides the result (and carrier); completedView mirrors it. */
function completedSet(now: Sql): Sql {
  return sql`state = 'done', progress = 100, finished_at = ${now}, lease_owner = NULL, lease_expires = NULL, updated_at = ${now}`;
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
  const viewed = sorted.some((i) => i.wantsView);
  if (viewed) {
    // With a `completed` listener: the same complete, which also returns each completed row as
    // written (kind 'view', migration 20); carriers may be NULL there.
    const traced = hasCarriers(sorted) ? sql`${sorted.map((i) => i.carrier ?? null)}::text[]` : sql`NULL::text[]`;
    return sql`SELECT * FROM job_queue_complete_views(${owner}, ${sorted.map((i) => i.id)}::bigint[],
    ${sorted.map((i) => i.resultJson)}::text[], ${notify}, ${traced})`;
  }
  return sql`SELECT kind, job FROM job_queue_complete(${owner}, ${sorted.map((i) => i.id)}::bigint[],
    ${sorted.map((i) => i.resultJson)}::text[], ${notify}${carriers})`;
}

/**
 * completeWithDependentsPostgres (without views) ending with the worker's claim, in the same
 * statement and so the same transaction (see lib/finalize/follow-up-claim.ts): a chain link
 * used to cost the complete, then a claim after the promotion's NOTIFY. One call of
 * `job_queue_complete_then_claim` (migration 27), whose statements PostgreSQL plans once per
 * session. The claim runs after the complete and sees its promotions. Row locks: the complete's
 * rows and dependents first, then the claim's SKIP LOCKED rows, the order every finalize takes
 * them; the claim waits on no job row. The claim functions turn `synchronous_commit` off for
 * their transaction (a lost claim only expires); the function puts the session's setting back,
 * so this commit is as durable as the complete's alone.
 *
 * The notifications are the complete's, sent by the function: the settled ids for waiters, and
 * the ready wake as `r:<owner>`, which the worker that claimed already ignores (it would only
 * claim again and find nothing) and every other process takes as `r`.
 *
 * Rows: one per claimed job (the claim's columns, `trace_context` only for a traced claim), or
 * one with NULL columns when it took none; every row carries the complete's rows as
 * `done_kinds` / `done_jobs`.
 */
export function completeThenClaimPostgres(owner: string, items: Completion[], notify: boolean, claim: PostgresClaimArgs, withTrace: boolean): Sql {
  // One owner for the complete's guard and the claim's leases: the worker's.
  if (claim.owner !== owner) throw new Error(`a complete by ${owner} cannot end with a claim by ${claim.owner}`);
  const sorted = [...items].sort((a, b) => a.id - b.id);
  const carriers = hasCarriers(sorted) ? sorted.map((i) => i.carrier ?? null) : null;
  return sql`SELECT * FROM job_queue_complete_then_claim(${owner}, ${sorted.map((i) => i.id)}::bigint[],
    ${sorted.map((i) => i.resultJson)}::text[], ${carriers}::text[], ${notify}, ${readyPayloadOf(owner)},
    ${claim.types}::text[], ${claim.groups}::text[], ${claim.limits}::int[], ${claim.any}::int, ${claim.ttlMs}::float8, ${claim.start},
    ${claim.rotation}::int, ${claim.weightGroups}::text[], ${claim.weights}::int[], ${withTrace}, ${claim.weightSet}::text, ${claim.cursor}::text)`;
}

/** The views in the rows of completeWithDependentsPostgres (kind 'view': the rows as written), for the completions that asked. */
export function completedViewsPostgres(rows: Row[], items: Completion[], dialect: SqlExecutor['dialect']): Map<number, JobView> {
  const wanted = new Set(items.filter((i) => i.wantsView).map((i) => i.id));
  const views = new Map<number, JobView>();
  for (const row of rows) if (row.kind === 'view' && wanted.has(Number(row.id))) views.set(Number(row.id), toJobView(toJobRecord(row, dialect)));
  return views;
}

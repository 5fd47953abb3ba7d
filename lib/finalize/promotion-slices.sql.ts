import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { notifyInTransaction } from '../notify/notify.sql';
import { promoteDependentsMysql } from './promote-mysql.sql';

/**
 * Dependents one transaction counts down for a single done job. Past this, the job's promotion
 * goes to a cursor (SQLite migration 10, PostgreSQL migration 24, whose completes have this
 * number written in, MySQL migration 15) and runs in slices of this size, one transaction each:
 * about 20-50 ms per slice on a loaded machine instead of 1-2 s (PostgreSQL, SQLite) or several
 * seconds (MariaDB) for 100,000, no lock held over the whole promotion, and the first dependents
 * running while the rest are counted down.
 */
export const PROMOTION_SLICE = 2_000;

/** Of `doneIds` (a bounded list), those with more dependents than one slice. */
export async function jobsWithManyDependents(tx: SqlExecutor, doneIds: readonly number[], slice = PROMOTION_SLICE): Promise<number[]> {
  const { rows } = await tx.run(sql`SELECT depends_on_id FROM job_deps WHERE depends_on_id IN (${sql.list(doneIds)})
    GROUP BY depends_on_id HAVING COUNT(*) > ${slice}`);
  return rows.map((r) => Number(r.depends_on_id));
}

/** Records that `ids` are done and none of their dependents has been counted down yet. */
export async function openPromotionCursors(tx: SqlExecutor, ids: readonly number[]): Promise<void> {
  await tx.run(sql`INSERT INTO job_queue_promotions (job_id, after_job_id) SELECT id, 0 FROM jobs WHERE id IN (${sql.list(ids)})`);
}

export interface SliceOutcome {
  /** Dependents made ready by this slice. */
  promoted: number;
  /** False when no cursor was left to work on. */
  found: boolean;
}

/**
 * One slice of one open cursor, in the caller's transaction: counts down the next `slice`
 * dependents (by id) of the cursor's job, then advances the cursor past them, or drops it after
 * the last. The UPDATE and the cursor move commit together, so a crash between slices neither
 * loses a dependent nor counts one down twice. On PostgreSQL and MySQL the cursor row is locked
 * with SKIP LOCKED (processes work on different cursors, or one waits for none), the dependents
 * are locked in id order like every other multi-row write, and on PostgreSQL `notify` announces
 * what became ready. `promoted` is -1 on MySQL, which cannot say how many without another read.
 */
export async function promoteNextSlice(tx: SqlExecutor, slice = PROMOTION_SLICE, notify = false): Promise<SliceOutcome> {
  const d = tx.dialect.name;
  const pg = d === 'postgres';
  const { rows: cursors } = await tx.run(sql`SELECT job_id, after_job_id FROM job_queue_promotions ORDER BY job_id LIMIT 1${d === 'sqlite' ? sql`` : sql` FOR UPDATE SKIP LOCKED`}`);
  if (!cursors.length) return { promoted: 0, found: false };
  const job = Number(cursors[0].job_id);
  const after = Number(cursors[0].after_job_id);
  const { rows: bound } = await tx.run(sql`SELECT job_id FROM job_deps WHERE depends_on_id = ${job} AND job_id > ${after}
    ORDER BY job_id LIMIT 1 OFFSET ${slice - 1}`);
  const upTo = bound.length ? Number(bound[0].job_id) : null;
  const range = upTo === null ? sql`` : sql` AND job_id <= ${upTo}`;
  const now = tx.dialect.now();
  const counts = sql`SELECT job_id, COUNT(*) AS n FROM job_deps WHERE depends_on_id = ${job} AND job_id > ${after}${range} GROUP BY job_id`;
  // The same countdown as the unsliced promotion (lib/finalize/cascade.sql.ts), for one slice.
  const set = sql`state = CASE WHEN jobs.state = 'waiting' AND jobs.is_container = 0 AND jobs.pending_deps - dep.n <= 0 THEN 'ready' ELSE jobs.state END,
      pending_deps = jobs.pending_deps - dep.n, updated_at = ${now}`;
  let promoted: number;
  if (d === 'mysql') {
    promoted = await promoteDependentsMysql(tx, counts);
  } else {
    if (pg) await tx.run(sql`SET LOCAL enable_hashjoin = off`); // the join walks dep in id order, so locks go in id order
    const { rows } = await tx.run(
      pg
        ? sql`WITH dep AS MATERIALIZED (${counts} ORDER BY job_id) UPDATE jobs SET ${set} FROM dep WHERE jobs.id = dep.job_id RETURNING jobs.state`
        : sql`UPDATE jobs SET ${set} FROM (${counts}) AS dep WHERE jobs.id = dep.job_id RETURNING jobs.state`,
    );
    promoted = rows.filter((r) => r.state === 'ready').length;
  }
  if (upTo === null) await tx.run(sql`DELETE FROM job_queue_promotions WHERE job_id = ${job}`);
  else await tx.run(sql`UPDATE job_queue_promotions SET after_job_id = ${upTo} WHERE job_id = ${job}`);
  if (promoted && notify) await notifyInTransaction(tx, 'r');
  return { promoted, found: true };
}

/**
 * For retry's recount: a dependency that is done but whose sliced promotion has not reached
 * this dependent yet still counts as open (the slice will count it down). `dep` is the job_deps
 * alias, `u` the upstream job's.
 */
export function notYetCountedDown(): Sql {
  return sql`EXISTS (SELECT 1 FROM job_queue_promotions p WHERE p.job_id = u.id AND dep.job_id > p.after_job_id)`;
}

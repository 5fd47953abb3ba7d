import { sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { CLAIMED_COLUMNS, toClaimedJob, type ClaimedJob } from './claimed-job';
import type { ClaimRequest } from './claim-request';
import { claimableFilter, leaseAssignments, readyIndexHint } from './lease-assignments';
import type { RotationCursor, RotationGroup } from './rotation-plan';

const CURSOR = 'fair-share';

/**
 * Reads the shared rotation cursor, locked until the claim commits, so that concurrent claimers
 * take successive groups instead of the same ones. SQLite's BEGIN IMMEDIATE already excludes
 * every other writer.
 */
export async function lockRotationCursor(tx: SqlExecutor): Promise<RotationCursor> {
  const lock = tx.dialect.name === 'sqlite' ? sql`` : sql` FOR UPDATE`;
  const { rows } = await tx.run(sql`SELECT group_key, served FROM job_queue_rotation WHERE name = ${CURSOR}${lock}`);
  return rows.length ? { group: String(rows[0].group_key), served: Number(rows[0].served) } : { group: '', served: 0 };
}

export async function saveRotationCursor(tx: SqlExecutor, cursor: RotationCursor): Promise<void> {
  await tx.run(sql`UPDATE job_queue_rotation SET group_key = ${cursor.group}, served = ${cursor.served} WHERE name = ${CURSOR}`);
}

/**
 * MySQL: leases candidates this transaction has locked and moves the cursor it has locked, in one
 * multi-table UPDATE: a rotation claim there is a round trip per statement, and this saves one
 * of six. The lease columns are the jobs table's alone, so the assignments need no qualifier.
 */
export async function leaseJobsMovingCursor(tx: SqlExecutor, request: ClaimRequest, candidates: ClaimedJob[], cursor: RotationCursor): Promise<ClaimedJob[]> {
  const ids = candidates.map((c) => c.id).sort((a, b) => a - b);
  await tx.run(sql`UPDATE jobs, job_queue_rotation SET ${leaseAssignments(tx.dialect, request)},
    job_queue_rotation.group_key = ${cursor.group}, job_queue_rotation.served = ${cursor.served}
    WHERE jobs.id IN (${sql.list(ids)}) AND job_queue_rotation.name = ${CURSOR}`);
  // The rows are locked, so the values read still hold (as in leaseJobs).
  return candidates.map((job) => ({ ...job, attempts: job.attempts + 1 }));
}

/** The walk of a rotation claim: the cursor, locked, and the groups after it, each with its next job locked. */
export interface RotationWalk {
  cursor: RotationCursor;
  groups: ProbedGroup[];
}

/**
 * Locks the cursor and walks up to `want` groups from it, wrapping round to the first groups
 * (below the first one taken) when the walk runs out; paused groups are stepped over. On MySQL
 * all of it is one call of `job_queue_rotation_walk` (MySQL migration 13), where it was two or
 * three round trips; elsewhere the same steps as statements (PostgreSQL claims through its own
 * function and does not come here).
 */
export async function walkRotation(tx: SqlExecutor, types: readonly string[], want: number, paused: readonly string[]): Promise<RotationWalk> {
  if (tx.dialect.name === 'mysql') {
    const { rows } = await tx.run(
      sql`CALL job_queue_rotation_walk(${JSON.stringify(types)}, ${want}, ${paused.length ? JSON.stringify(paused) : null})`,
    );
    // mysql2 hands back a CALL's result sets (the cursor, then the jobs) followed by its status.
    const sets = rows as unknown as Row[][];
    const [cur] = sets[0];
    return {
      cursor: { group: String(cur.group_key ?? ''), served: Number(cur.served ?? 0) },
      groups: sets[1].map((r) => ({ group: String(r.group_key), weight: Math.max(1, Number(r.weight ?? 1)), next: toClaimedJob(r) })),
    };
  }
  const cursor = await lockRotationCursor(tx);
  const ahead = await nextReadyGroups(tx, types, cursor.group, want, undefined, true, paused);
  const wrapped = ahead.length < want ? await nextReadyGroups(tx, types, '', want - ahead.length, ahead[0]?.group, true, paused) : [];
  return { cursor, groups: [...ahead, ...wrapped] };
}

/** A group found by the probe; with `lock`, also its next job, locked. */
export interface ProbedGroup extends RotationGroup {
  next?: ClaimedJob;
}

/**
 * Up to `max` groups with claimable jobs, in group index order from `from` (inclusive) and
 * below `before` if given, each with the weight of its next job: a loose index scan, one
 * statement per group, each a read of the ready group index that stops at its first row, so
 * the cost follows the groups returned, however many groups and jobs lie elsewhere.
 *
 * With `lock` (inside a claim, on SQLite: MySQL walks in one procedure call, see walkRotation)
 * each probe also returns that next job: a group given one slot needs no second statement.
 *
 * Not MIN(group_key), nor a recursive CTE: on a table not analyzed yet PostgreSQL aggregates
 * every ready row for MIN, and MariaDB walks the index from its start for a probe inside a
 * recursive CTE (measured: 35 ms per probe at 30,000 groups, against 0.05 ms for this one).
 */
export async function nextReadyGroups(
  tx: SqlExecutor,
  types: readonly string[],
  from: string,
  max: number,
  before?: string,
  lock = false,
  /** Paused groups: stepped over (one probe each), never returned. */
  exclude: readonly string[] = [],
): Promise<ProbedGroup[]> {
  const d = tx.dialect;
  if (d.name === 'postgres' && !lock && !exclude.length) {
    // One round trip: the same walk as one recursive statement (migration 7).
    const { rows } = await tx.run(
      sql`SELECT group_key, weight FROM job_queue_ready_groups(${[...types]}::text[], ${from}::text, ${before ?? null}::text, ${max}::int)`,
    );
    return rows.map((r) => ({ group: String(r.group_key), weight: Math.max(1, Number(r.weight ?? 1)) }));
  }
  const index = readyIndexHint(d, '');
  const skip = new Set(exclude);
  const order = d.name === 'mysql' ? sql`group_key, neg_priority, id` : sql`group_key, priority DESC, id`;
  const upper = before === undefined ? sql`` : sql` AND group_key < ${before}`;
  const columns = lock ? sql`${CLAIMED_COLUMNS}, weight` : sql`group_key, weight`;
  const locking = lock && d.name !== 'sqlite' ? sql` FOR UPDATE SKIP LOCKED` : sql``;
  const found: ProbedGroup[] = [];
  let after: string | undefined;
  while (found.length < max) {
    const lower = after === undefined ? sql`group_key >= ${from}` : sql`group_key > ${after}`;
    const { rows } = await tx.run(sql`SELECT ${columns} FROM jobs${index}
      WHERE ${claimableFilter(d, types, undefined)} AND ${lower}${upper}
      ORDER BY ${order} LIMIT 1${locking}`);
    if (!rows.length) break;
    after = String(rows[0].group_key);
    // A paused group's job locked by this probe stays unclaimed; the lock ends with the claim.
    if (skip.has(after)) continue;
    found.push({ group: after, weight: Math.max(1, Number(rows[0].weight ?? 1)), next: lock ? toClaimedJob(rows[0]) : undefined });
  }
  return found;
}

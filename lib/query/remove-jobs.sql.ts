import { inChunks } from '../database/in-chunks';
import { sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { takeBatch } from '../finalize/take-batch';
import { deleteJobRows, FINISHED_STATES, SQLITE_REMOVAL_BATCH_BYTES, sqliteValueBytes, untiedToOpenWork } from '../removal/job-removal.sql';

export interface RemoveOutcome {
  /** Jobs deleted, with their edges and idle key rows. */
  removed: number[];
  /** Finished jobs kept because unfinished work is tied to them (see untiedToOpenWork). */
  tied: number[];
  /** SQLite: finished, untied jobs left for another transaction, past SQLITE_REMOVAL_BATCH_BYTES. */
  deferred: number[];
  /** The state of each given job found, as locked (finished) or read (unfinished). */
  states: Map<number, string>;
}

const FINISHED = sql.raw(FINISHED_STATES.map((s) => `'${s}'`).join(', '));

/**
 * Deletes the given jobs that are finished and tied to no unfinished work, in this transaction.
 * The finished rows are locked first, in id order, and their ties read in a statement of their
 * own after that: a dependent enqueued meanwhile locks its upstream `FOR SHARE` and commits before
 * the lock is granted, so a later statement sees it where one statement's snapshot, taken before
 * the wait, would not (PostgreSQL's READ COMMITTED). Everything else stays as it is.
 */
export async function removeJobs(tx: SqlExecutor, given: readonly number[]): Promise<RemoveOutcome> {
  const d = tx.dialect;
  const ids = [...new Set(given)].sort((a, b) => a - b);
  const lock = d.name === 'sqlite' ? sql`` : sql` FOR UPDATE`;
  const found = await inChunks(tx, ids, (list) => sql`SELECT id, state FROM jobs WHERE id IN (${list}) ORDER BY id`);
  const states = new Map(found.map((r) => [Number(r.id), String(r.state)]));
  const finished = found.filter((r) => (FINISHED_STATES as readonly string[]).includes(String(r.state))).map((r) => Number(r.id));
  if (!finished.length) return { removed: [], tied: [], deferred: [], states };
  // Locked, and their state read again under the lock: a retry may have reopened one meanwhile.
  const locked = await inChunks(tx, finished, (list) => sql`SELECT id, state FROM jobs WHERE id IN (${list}) AND state IN (${FINISHED}) ORDER BY id${lock}`);
  for (const id of finished) states.delete(id);
  for (const r of locked) states.set(Number(r.id), String(r.state));
  const lockedIds = locked.map((r) => Number(r.id));
  if (!lockedIds.length) return { removed: [], tied: [], deferred: [], states: await readStates(tx, ids, states) };
  const free = await inChunks(tx, lockedIds, (list) => sql`SELECT j.id, j.job_key FROM jobs j WHERE j.id IN (${list}) AND ${untiedToOpenWork(tx)} ORDER BY j.id`);
  const freeIds = new Set(free.map((r) => Number(r.id)));
  const tied = lockedIds.filter((id) => !freeIds.has(id));
  let rows: Row[] = free;
  let deferred: number[] = [];
  if (d.name === 'sqlite' && free.length) {
    const sizeOf = await sqliteValueBytes(tx, free);
    const queue = [...free];
    rows = takeBatch(queue, queue.length, SQLITE_REMOVAL_BATCH_BYTES, sizeOf);
    deferred = queue.map((r) => Number(r.id));
  }
  await deleteJobRows(tx, rows, false);
  return { removed: rows.map((r) => Number(r.id)), tied, deferred, states: await readStates(tx, ids, states) };
}

/** States of jobs that changed between the first read and the lock (a retry reopened them), read again. */
async function readStates(tx: SqlExecutor, ids: readonly number[], states: Map<number, string>): Promise<Map<number, string>> {
  const missing = ids.filter((id) => !states.has(id));
  if (!missing.length) return states;
  const rows = await inChunks(tx, missing, (list) => sql`SELECT id, state FROM jobs WHERE id IN (${list})`);
  for (const r of rows) states.set(Number(r.id), String(r.state));
  return states;
}

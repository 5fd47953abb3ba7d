import { chunked, sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { UpstreamFailure } from '../handlers/job-context';
import { ownedBy } from './lease-guard.sql';

/** Statements in autocommit, and a transaction for the MySQL renewal's locking read. */
export interface TransactionalExecutor extends SqlExecutor {
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/**
 * Extends the lease of every job this worker holds, in one statement, and returns the ids it
 * still holds. A job missing from the answer was reclaimed, cancelled or failed by a sweep:
 * the caller aborts its handler.
 *
 * The renewal never waits for a row lock: rows another transaction holds (this worker's own
 * finalize completing or failing them, a cascade) are skipped this round and renewed by the
 * next heartbeat, and still count as held. A renewal that waited held every lease it had not
 * yet reached hostage to that transaction: with 8 worker processes on PostgreSQL a finalize
 * that locked its completions and then its failures (not one id order) deadlocked with the
 * renewal, each deadlock took the server's deadlock_timeout (1 s) to break, and a live
 * worker's 2 s leases expired under running jobs, which then ran twice.
 */
export async function renewLeases(db: TransactionalExecutor, owner: string, leaseTtlMs: number): Promise<Set<number>> {
  const now = db.dialect.now();
  const set = sql`lease_expires = ${db.dialect.addMs(now, leaseTtlMs)}, heartbeat_at = ${now}`;
  const mine = sql`state IN ('leased', 'running') AND lease_owner = ${owner}`;
  if (db.dialect.name === 'postgres') {
    // The outer read sees the statement's snapshot (a data-modifying CTE's writes are not
    // visible to it): renewed and skipped rows alike, as long as they are still this worker's.
    const { rows } = await db.run(sql`WITH renewed AS (UPDATE jobs SET ${set}
        WHERE id IN (SELECT id FROM jobs WHERE ${mine} FOR UPDATE SKIP LOCKED) RETURNING id)
      SELECT id FROM jobs WHERE ${mine}`);
    return new Set(rows.map((r) => Number(r.id)));
  }
  if (db.dialect.name === 'sqlite') {
    const { rows } = await db.run(sql`UPDATE jobs SET ${set} WHERE ${mine} RETURNING id`);
    return new Set(rows.map((r) => Number(r.id)));
  }
  // MySQL/MariaDB: find the rows with a plain (non-locking) read, then lock only those, by
  // primary key. Searching `state IN ('leased', 'running')` in a locking statement walks the
  // in-flight index (state, lease_expires) and, at the server's default REPEATABLE READ (an
  // application's DataSource may run this in autocommit at it), takes next-key locks on it:
  // the gap between 'leased' and 'running' is where 'ready' entries go, so a finalize promoting
  // dependents to 'ready' waited for the renewal while the renewal waited for the finalize's
  // lock on the job it had just completed: a deadlock on every big promotion. A primary-key
  // lookup locks the records alone, no gaps; SKIP LOCKED (8.0 / MariaDB 10.6) needs the
  // transaction the UPDATE then runs in.
  const { rows: held } = await db.run(sql`SELECT id FROM jobs WHERE ${mine} ORDER BY id`);
  if (!held.length) return new Set();
  for (const chunk of chunked(held.map((r) => Number(r.id)))) {
    await db.transaction(async (tx) => {
      const { rows: free } = await tx.run(sql`SELECT id FROM jobs WHERE id IN (${sql.list(chunk)}) AND ${mine} ORDER BY id FOR UPDATE SKIP LOCKED`);
      if (free.length) await tx.run(sql`UPDATE jobs SET ${set} WHERE id IN (${sql.list(free.map((r) => Number(r.id)))})`);
    });
  }
  const { rows } = await db.run(sql`SELECT id FROM jobs WHERE ${mine}`);
  return new Set(rows.map((r) => Number(r.id)));
}

/** Persists `ctx.progress()`; false when the lease is gone. */
export async function writeProgress(db: SqlExecutor, owner: string, id: number, percent: number, stage: string | null): Promise<boolean> {
  const { affected } = await db.run(sql`UPDATE jobs SET progress = ${percent}, current_stage = ${stage}, updated_at = ${db.dialect.now()}
    WHERE id = ${id} AND ${ownedBy(db.dialect, owner)}`);
  return affected > 0;
}

/** A job's upstreams that failed or were cancelled, keyed as readUpstreamResults keys them. */
export async function readUpstreamFailures(db: SqlExecutor, id: number): Promise<Record<string, UpstreamFailure>> {
  const { rows } = await db.run(sql`SELECT u.id, u.ref, u.state, u.last_error FROM job_deps d JOIN jobs u ON u.id = d.depends_on_id
    WHERE d.job_id = ${id} AND u.state IN ('failed', 'cancelled') ORDER BY u.id`);
  const out: Record<string, UpstreamFailure> = {};
  for (const r of rows) {
    const failure: UpstreamFailure = { id: Number(r.id), state: r.state as UpstreamFailure['state'], error: r.last_error == null ? null : String(r.last_error) };
    out[r.ref != null ? String(r.ref) : String(r.id)] = failure;
  }
  return out;
}

/** Results of a job's upstreams, each once: keyed by its graph ref, or by its id (as a string) when it has none. */
export async function readUpstreamResults(db: SqlExecutor, id: number): Promise<Record<string, unknown>> {
  const { rows } = await db.run(sql`SELECT u.id, u.ref, u.result FROM job_deps d JOIN jobs u ON u.id = d.depends_on_id
    WHERE d.job_id = ${id} ORDER BY u.id`);
  const out: Record<string, unknown> = {};
  for (const r of rows) {
    const value = r.result == null ? null : JSON.parse(String(r.result));
    out[r.ref != null ? String(r.ref) : String(r.id)] = value;
  }
  return out;
}

import { chunked, sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { TransactionalExecutor } from './lease.sql';

export interface HandBack {
  /** Rows returned to `ready`. */
  handedBack: number;
  /** Rows still this worker's that another transaction had locked: the caller tries them again later. */
  held: number[];
}

/**
 * Returns jobs this worker will not finish (shutdown, stale prefetch, a pause) to `ready` at
 * once, without counting the interrupted attempt, so another worker picks them up without
 * waiting for the lease to expire. Their `run_after` stays: they were due when claimed, and keep
 * their place in claim order (priority, due time, id) instead of queuing behind every job that
 * became due since.
 *
 * It never waits for a row lock: rows another transaction holds (this worker's finalize or
 * renewal, a cancel, an operator's session) are skipped and reported as `held`. A hand-back that
 * waited locked rows in whatever order the plan visited them (PostgreSQL's bitmap scan: heap
 * order, not id order) and so could deadlock with a transaction locking the same rows in
 * another order; and it stalled a shutdown for as long as the lock lasted. Left held, a job's
 * lease merely expires and it is reclaimed after the TTL (the scheduler retries it first).
 */
export async function handBackLeases(db: TransactionalExecutor, owner: string, ids: number[]): Promise<HandBack> {
  const out: HandBack = { handedBack: 0, held: [] };
  for (const chunk of chunked([...new Set(ids)].sort((a, b) => a - b))) {
    const part = await handBackChunk(db, owner, chunk);
    out.handedBack += part.handedBack;
    out.held.push(...part.held);
  }
  return out;
}

async function handBackChunk(db: TransactionalExecutor, owner: string, ids: number[]): Promise<HandBack> {
  const mine = (t = '') => sql`${sql.raw(t)}id IN (${sql.list(ids)}) AND ${sql.raw(t)}lease_owner = ${owner} AND ${sql.raw(t)}state IN ('leased', 'running')`;
  const set = (d: SqlExecutor['dialect']) => sql`state = 'ready', lease_owner = NULL, lease_expires = NULL,
    attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, started_at = NULL, updated_at = ${d.now()}`;
  if (db.dialect.name === 'postgres') {
    // The outer read sees the statement's snapshot, before the CTE's writes: every row still
    // this worker's, handed back now or skipped as locked.
    const { rows } = await db.run(sql`WITH handed AS (UPDATE jobs SET ${set(db.dialect)}
        WHERE id IN (SELECT id FROM jobs WHERE ${mine()} ORDER BY id FOR UPDATE SKIP LOCKED) RETURNING id)
      SELECT j.id, h.id AS handed FROM jobs j LEFT JOIN handed h ON h.id = j.id WHERE ${mine('j.')}`);
    const held = rows.filter((r) => r.handed == null).map((r) => Number(r.id));
    return { handedBack: rows.length - held.length, held };
  }
  if (db.dialect.name === 'sqlite') {
    // One writer at a time: no row locks to meet (a busy database is retried by the executor).
    const { affected } = await db.run(sql`UPDATE jobs SET ${set(db.dialect)} WHERE ${mine()}`);
    return { handedBack: affected, held: [] };
  }
  // MySQL/MariaDB: lock by primary key in id order, skipping locked rows (record locks only, no
  // gaps), then update those; SKIP LOCKED needs the transaction.
  const handedBack = await db.transaction(async (tx) => {
    const { rows } = await tx.run(sql`SELECT id FROM jobs WHERE ${mine()} ORDER BY id FOR UPDATE SKIP LOCKED`);
    if (!rows.length) return 0;
    const { affected } = await tx.run(sql`UPDATE jobs SET ${set(db.dialect)} WHERE id IN (${sql.list(rows.map((r) => Number(r.id)))})`);
    return affected;
  });
  const { rows: held } = await db.run(sql`SELECT id FROM jobs WHERE ${mine()} ORDER BY id`);
  return { handedBack, held: held.map((r) => Number(r.id)) };
}

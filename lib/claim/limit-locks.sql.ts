import { chunked, sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobQueueLimits } from '../job-queue.options';
import type { InFlight } from './limit-room';
import { inLockOrder } from './lock-order';

export function limitLockName(kind: 'global' | 'group' | 'type', key = ''): string {
  return kind === 'global' ? 'global' : `${kind}:${key}`;
}

/** Every lock row the configured limits can need; created once at start-up. */
export function allLimitLockNames(limits: JobQueueLimits): string[] {
  return [
    ...(limits.global ? [limitLockName('global')] : []),
    ...Object.keys(limits.groups ?? {}).map((g) => limitLockName('group', g)),
    ...Object.keys(limits.types ?? {}).map((t) => limitLockName('type', t)),
  ];
}

/**
 * Inserts the rows that are missing, LIST_CHUNK per statement (thousands of named groups
 * must not pass the bind limits: 32,766 on SQLite, 65,535 on PostgreSQL and MySQL), in lock
 * order: a start-up's INSERT IGNORE share-locks the existing rows it meets (MySQL), and in
 * another order than the claimers' it deadlocked with one.
 */
export async function ensureLimitRows(db: SqlExecutor, names: string[]): Promise<void> {
  for (const chunk of chunked(inLockOrder(names))) {
    const values = sql.join(chunk.map((n) => sql`(${n})`));
    const insert =
      db.dialect.name === 'postgres'
        ? sql`INSERT INTO job_queue_locks (name) VALUES ${values} ON CONFLICT DO NOTHING`
        : db.dialect.name === 'mysql'
          ? sql`INSERT IGNORE INTO job_queue_locks (name) VALUES ${values}`
          : sql`INSERT OR IGNORE INTO job_queue_locks (name) VALUES ${values}`;
    await db.run(insert);
  }
}

/**
 * Locks these caps' rows for the transaction, by name (the caller passes one level of
 * inLockOrder at a time: global and types, or groups). Any other claimer of a capped dimension
 * waits here until this transaction commits, and then counts our rows too. SQLite's BEGIN
 * IMMEDIATE already excludes every other writer.
 */
export async function lockLimitRows(tx: SqlExecutor, names: readonly string[]): Promise<void> {
  if (!names.length || tx.dialect.name === 'sqlite') return;
  for (const chunk of chunked(inLockOrder(names))) {
    await tx.run(sql`SELECT name FROM job_queue_locks WHERE name IN (${sql.list(chunk)}) ORDER BY name FOR UPDATE`);
  }
}

/** Jobs in flight by group and type: as many rows as there are (group, type) pairs in flight. */
export async function countInFlight(tx: SqlExecutor): Promise<InFlight> {
  const { rows } = await tx.run(
    sql`SELECT group_key, type, COUNT(*) AS n FROM jobs WHERE state IN ('leased', 'running') GROUP BY group_key, type`,
  );
  let total = 0;
  const byGroup = new Map<string, number>();
  const byType = new Map<string, number>();
  for (const r of rows) {
    const n = Number(r.n);
    total += n;
    byGroup.set(String(r.group_key), (byGroup.get(String(r.group_key)) ?? 0) + n);
    byType.set(String(r.type), (byType.get(String(r.type)) ?? 0) + n);
  }
  return { total, byGroup, byType };
}

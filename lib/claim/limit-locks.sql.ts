import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobQueueLimits } from '../job-queue.options';
import type { LimitRoom } from './within-limits';

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

export async function ensureLimitRows(db: SqlExecutor, names: string[]): Promise<void> {
  if (!names.length) return;
  // In name order, the order claimers lock these rows in: a start-up's INSERT IGNORE share-locks
  // the existing rows it meets (MySQL), and in another order it deadlocked with a claimer.
  const values = sql.join([...names].sort().map((n) => sql`(${n})`));
  const insert =
    db.dialect.name === 'postgres'
      ? sql`INSERT INTO job_queue_locks (name) VALUES ${values} ON CONFLICT DO NOTHING`
      : db.dialect.name === 'mysql'
        ? sql`INSERT IGNORE INTO job_queue_locks (name) VALUES ${values}`
        : sql`INSERT OR IGNORE INTO job_queue_locks (name) VALUES ${values}`;
  await db.run(insert);
}

/**
 * Locks the rows of the limits this claim could push past, in name order (a global order, so
 * claimers never deadlock on each other), then counts jobs in flight. Any other claimer of a
 * capped dimension waits here until this transaction commits, and then counts our rows too.
 */
export async function roomUnderLimits(tx: SqlExecutor, limits: JobQueueLimits, names: string[]): Promise<LimitRoom> {
  if (!names.length) return {};
  if (tx.dialect.name !== 'sqlite') {
    await tx.run(sql`SELECT name FROM job_queue_locks WHERE name IN (${sql.list([...names].sort())}) ORDER BY name FOR UPDATE`);
  }
  const { rows } = await tx.run(
    sql`SELECT group_key, type, COUNT(*) AS n FROM jobs WHERE state IN ('leased', 'running') GROUP BY group_key, type`,
  );
  const room: Required<LimitRoom> = { total: Infinity, groups: {}, types: {} };
  let total = 0;
  const perGroup: Record<string, number> = {};
  const perType: Record<string, number> = {};
  for (const r of rows) {
    const n = Number(r.n);
    total += n;
    perGroup[String(r.group_key)] = (perGroup[String(r.group_key)] ?? 0) + n;
    perType[String(r.type)] = (perType[String(r.type)] ?? 0) + n;
  }
  if (limits.global) room.total = limits.global - total;
  for (const [g, max] of Object.entries(limits.groups ?? {})) room.groups[g] = max - (perGroup[g] ?? 0);
  for (const [t, max] of Object.entries(limits.types ?? {})) room.types[t] = max - (perType[t] ?? 0);
  return room;
}

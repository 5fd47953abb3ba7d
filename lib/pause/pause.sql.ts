import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { PausedEntry } from './pause-target';

export async function insertPause(db: SqlExecutor, entry: PausedEntry): Promise<void> {
  const d = db.dialect;
  const values = sql`(${entry.kind}, ${entry.name}, ${d.now()})`;
  await db.run(
    d.name === 'postgres'
      ? sql`INSERT INTO job_queue_paused (kind, name, paused_at) VALUES ${values} ON CONFLICT DO NOTHING`
      : d.name === 'mysql'
        ? sql`INSERT IGNORE INTO job_queue_paused (kind, name, paused_at) VALUES ${values}`
        : sql`INSERT OR IGNORE INTO job_queue_paused (kind, name, paused_at) VALUES ${values}`,
  );
}

export async function deletePause(db: SqlExecutor, entry: PausedEntry): Promise<void> {
  await db.run(sql`DELETE FROM job_queue_paused WHERE kind = ${entry.kind} AND name = ${entry.name}`);
}

/** Counts a change of the paused entries (pause, resume), in the transaction that makes it (migration `job_queue_versions`). */
export async function bumpPausedVersion(tx: SqlExecutor): Promise<void> {
  await tx.run(sql`UPDATE job_queue_versions SET version = version + 1 WHERE name = 'paused'`);
}

/**
 * The version of the paused entries and the count of writes to their table (each null without its
 * row); on MySQL/MariaDB, instead of the writes, the number of entries.
 */
export interface PausedStamp {
  version: number | null;
  writes: number | null;
  count?: number;
}

/**
 * The stamp after a change of this transaction: its update holds the version's row until the
 * commit, so no other change through pause/resume comes between. `writes` (triggers, migration
 * `paused_writes`) also moves for rows written by hand, which move no version. Two rows of
 * job_queue_versions: a count of the entries here cost 35-40 ms at 400,000 paused groups, a call.
 * MySQL/MariaDB keep the count: a trigger there needs SUPER (or log_bin_trust_function_creators)
 * wherever binary logging is on, MySQL 8's default.
 */
export async function pausedStamp(tx: SqlExecutor): Promise<PausedStamp> {
  if (tx.dialect.name === 'mysql') {
    const { rows } = await tx.run(sql`SELECT (SELECT version FROM job_queue_versions WHERE name = 'paused') AS version,
      (SELECT COUNT(*) FROM job_queue_paused) AS n`);
    return { version: rows[0].version == null ? null : Number(rows[0].version), writes: null, count: Number(rows[0].n) };
  }
  const { rows } = await tx.run(sql`SELECT name, version FROM job_queue_versions WHERE name IN ('paused', 'paused_writes')`);
  const of = (name: string) => {
    const row = rows.find((r) => r.name === name);
    return row ? Number(row.version) : null;
  };
  return { version: of('paused'), writes: of('paused_writes') };
}

/**
 * The version of the paused entries and the count of writes, and the entries unless the version is
 * still `held` (null: read them): one statement, so they come from one snapshot and a pause that commits while it
 * runs is in neither or in both. One round trip, as the plain read was.
 */
export async function readPausesIfChanged(db: SqlExecutor, held: number | null): Promise<PausedStamp & { entries: PausedEntry[] | null }> {
  const { rows } = await db.run(sql`SELECT 'v' AS part, NULL AS kind, NULL AS name, version FROM job_queue_versions WHERE name = 'paused'
    UNION ALL
    SELECT 'w', NULL, NULL, version FROM job_queue_versions WHERE name = 'paused_writes'
    UNION ALL
    SELECT 'e', kind, name, NULL FROM job_queue_paused
    WHERE NOT EXISTS (SELECT 1 FROM job_queue_versions WHERE name = 'paused' AND version = ${held})`);
  const stamp = rows.find((r) => r.part === 'v');
  const version = stamp ? Number(stamp.version) : null;
  const written = rows.find((r) => r.part === 'w');
  const writes = written ? Number(written.version) : null;
  if (version !== null && version === held) return { version, writes, entries: null };
  const entries: PausedEntry[] = [];
  for (const r of rows) if (r.part === 'e') entries.push({ kind: r.kind as PausedEntry['kind'], name: String(r.name) });
  return { version, writes, entries };
}

export async function readPauses(db: SqlExecutor): Promise<PausedEntry[]> {
  const { rows } = await db.run(sql`SELECT kind, name FROM job_queue_paused ORDER BY kind, name`);
  return rows.map((r) => ({ kind: r.kind as PausedEntry['kind'], name: String(r.name) }));
}

/**
 * Past `after` in (kind, name) order, in the form each planner reads as a range of the primary key:
 * PostgreSQL and SQLite a row comparison (they filter an OR row by row, a whole scan per page at
 * 40,000 pauses), MariaDB the OR (it reads a row comparison from the index's start).
 */
function afterEntry(db: SqlExecutor, kind: PausedEntry['kind'] | undefined, after: PausedEntry): Sql {
  if (kind === after.kind) return sql`name > ${after.name}`;
  if (db.dialect.name === 'mysql') return sql`(kind > ${after.kind} OR (kind = ${after.kind} AND name > ${after.name}))`;
  return sql`(kind, name) > (${after.kind}, ${after.name})`;
}

/**
 * A page of pauses in (kind, name) order after `after` (exclusive), `limit + 1` rows so the
 * caller knows whether there is more. The primary key (kind, name) serves the order and the
 * keyset, so a page costs the same at 40,000 paused groups as at ten.
 */
export async function pausedPage(
  db: SqlExecutor,
  kind: PausedEntry['kind'] | undefined,
  after: PausedEntry | null,
  limit: number,
): Promise<Array<PausedEntry & { pausedAt: Date }>> {
  const conditions = [...(kind === undefined ? [] : [sql`kind = ${kind}`]), ...(after === null ? [] : [afterEntry(db, kind, after)])];
  const where = conditions.length ? sql`WHERE ${sql.join(conditions, ' AND ')}` : sql``;
  const { rows } = await db.run(
    sql`SELECT kind, name, ${db.dialect.selectTime('paused_at')} AS paused_at FROM job_queue_paused ${where} ORDER BY kind, name LIMIT ${limit + 1}`,
  );
  return rows.map((r) => ({ kind: r.kind as PausedEntry['kind'], name: String(r.name), pausedAt: db.dialect.parseTime(r.paused_at)! }));
}

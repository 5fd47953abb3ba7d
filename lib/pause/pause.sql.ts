import { sql } from '../database/sql';
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

export async function readPauses(db: SqlExecutor): Promise<PausedEntry[]> {
  const { rows } = await db.run(sql`SELECT kind, name FROM job_queue_paused ORDER BY kind, name`);
  return rows.map((r) => ({ kind: r.kind as PausedEntry['kind'], name: String(r.name) }));
}

import type { DataSource } from 'typeorm';
import type { Dialect } from '../job-queue.options';

/**
 * Reads of the two places a migration can be recorded: our `job_queue_migrations` (when the
 * queue runs them) and TypeORM's migrations table (when the application runs
 * `jobQueueMigrations(dialect)` itself).
 */

/** Whether the table is visible to this connection: search_path, the current database, or main. */
export async function historyTableExists(ds: DataSource, dialect: Dialect, table: string): Promise<boolean> {
  switch (dialect) {
    case 'postgres': {
      const [row] = await ds.query(`SELECT to_regclass($1) IS NOT NULL AS found`, [quoteName(dialect, table)]);
      return row?.found === true;
    }
    case 'mysql': {
      const [row] = await ds.query(
        `SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?`,
        [table],
      );
      return Number(row?.n) > 0;
    }
    case 'sqlite': {
      const [row] = await ds.query(`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?`, [table]);
      return Number(row?.n) > 0;
    }
  }
}

export async function readRecordedVersions(ds: DataSource): Promise<Set<number>> {
  const rows: Array<{ version: number | string }> = await ds.query(`SELECT version FROM job_queue_migrations`);
  return new Set(rows.map((r) => Number(r.version)));
}

export async function readTypeormNames(ds: DataSource, dialect: Dialect, table: string): Promise<Set<string>> {
  const rows: Array<{ name: string }> = await ds.query(`SELECT name FROM ${quoteName(dialect, table)}`);
  return new Set(rows.map((r) => String(r.name)));
}

/** TypeORM quotes its table name; a PostgreSQL `schema.table` is quoted part by part. */
function quoteName(dialect: Dialect, table: string): string {
  if (dialect === 'mysql') return '`' + table.replace(/`/g, '``') + '`';
  const parts = dialect === 'postgres' ? table.split('.') : [table];
  return parts.map((p) => '"' + p.replace(/"/g, '""') + '"').join('.');
}

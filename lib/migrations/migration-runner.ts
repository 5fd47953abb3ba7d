import type { DataSource, QueryRunner } from 'typeorm';
import { retrySqliteBusy } from '../database/retry-sqlite-busy';
import type { Dialect } from '../job-queue.options';
import { jobQueueMigrations } from './index';

const LOCK_NAME = 'nestjs-sql-job-queue:migrate';
const PG_LOCK_KEY = 0x6a6f6271; // 'jobq'

const HISTORY_TABLE: Record<Dialect, string> = {
  postgres: `CREATE TABLE IF NOT EXISTS job_queue_migrations (version integer PRIMARY KEY, name varchar(200) NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  mysql: `CREATE TABLE IF NOT EXISTS job_queue_migrations (version INT PRIMARY KEY, name VARCHAR(200) NOT NULL, applied_at DATETIME(3) NOT NULL) ENGINE=InnoDB`,
  sqlite: `CREATE TABLE IF NOT EXISTS job_queue_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
};

/**
 * Applies the shipped migrations that this database has not seen yet, recording them in our
 * own `job_queue_migrations` table (never the application's). Several processes may start at
 * once: PostgreSQL takes an advisory lock in the migration transaction, MySQL a named lock
 * (its DDL is not transactional), SQLite the write lock.
 * Returns the names of the migrations it applied.
 */
export async function runJobQueueMigrations(dataSource: DataSource, dialect: Dialect): Promise<string[]> {
  const qr = dataSource.createQueryRunner();
  try {
    await qr.connect();
    switch (dialect) {
      case 'postgres':
        return await inTransaction(qr, 'BEGIN', async () => {
          await qr.query(`SELECT pg_advisory_xact_lock(${PG_LOCK_KEY})`);
          return applyPending(qr, dialect);
        });
      case 'sqlite':
        // Other processes may be writing: wait for the write lock without failing the boot.
        return await retrySqliteBusy(() => inTransaction(qr, 'BEGIN IMMEDIATE', () => applyPending(qr, dialect)));
      case 'mysql': {
        const [row] = await qr.query(`SELECT GET_LOCK(?, 60) AS locked`, [LOCK_NAME]);
        if (Number(row?.locked) !== 1) throw new Error(`Timed out waiting for the migration lock "${LOCK_NAME}".`);
        try {
          return await applyPending(qr, dialect);
        } finally {
          await qr.query(`SELECT RELEASE_LOCK(?)`, [LOCK_NAME]);
        }
      }
    }
  } finally {
    await qr.release();
  }
}

async function inTransaction<T>(qr: QueryRunner, begin: string, work: () => Promise<T>): Promise<T> {
  await qr.query(begin);
  try {
    const result = await work();
    await qr.query('COMMIT');
    return result;
  } catch (err) {
    await qr.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

async function applyPending(qr: QueryRunner, dialect: Dialect): Promise<string[]> {
  await qr.query(HISTORY_TABLE[dialect]);
  const rows: Array<{ version: number | string }> = await qr.query(`SELECT version FROM job_queue_migrations`);
  const applied = new Set(rows.map((r) => Number(r.version)));
  const names: string[] = [];
  for (const migration of jobQueueMigrations(dialect)) {
    if (applied.has(migration.version)) continue;
    await migration.up(qr);
    const insert =
      dialect === 'postgres'
        ? `INSERT INTO job_queue_migrations (version, name) VALUES ($1, $2)`
        : dialect === 'mysql'
          ? `INSERT INTO job_queue_migrations (version, name, applied_at) VALUES (?, ?, UTC_TIMESTAMP(3))`
          : `INSERT INTO job_queue_migrations (version, name, applied_at) VALUES (?, ?, strftime('%Y-%m-%d %H:%M:%f', 'now'))`;
    await qr.query(insert, [migration.version, migration.name]);
    names.push(migration.name);
  }
  return names;
}

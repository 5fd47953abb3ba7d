import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Dialect } from 'nestjs-sql-job-queue';

export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** Runs raw SQL against one bench database, outside any queue, for counting and filling. */
export interface Probe {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** A single number from the first column of the first row. */
  scalar(text: string, params?: unknown[]): Promise<number>;
  close(): Promise<void>;
}

/**
 * A database of its own for one measured run: CREATE DATABASE on PostgreSQL and MariaDB, a file in
 * a temp directory for SQLite. Dropped afterwards, so runs never see each other's rows.
 */
export class BenchDatabase {
  readonly name = `jq_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  private dir: string | undefined;
  private probes: Probe[] = [];

  constructor(readonly dialect: Dialect) {}

  static async create(dialect: Dialect): Promise<BenchDatabase> {
    const db = new BenchDatabase(dialect);
    await db.create();
    return db;
  }

  /** postgres:// or mysql:// URL, or the SQLite file path. */
  get location(): string {
    if (this.dialect === 'sqlite') return join(this.dir!, 'jobs.sqlite');
    const u = new URL(this.dialect === 'postgres' ? PG_URL : MYSQL_URL);
    u.pathname = `/${this.name}`;
    return u.toString();
  }

  private async create(): Promise<void> {
    if (this.dialect === 'postgres') await adminPg(`CREATE DATABASE ${this.name}`);
    else if (this.dialect === 'mysql') await adminMysql(`CREATE DATABASE ${this.name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    else this.dir = mkdtempSync(join(tmpdir(), 'jq-bench-'));
  }

  async drop(): Promise<void> {
    await Promise.all(this.probes.map((p) => p.close().catch(() => undefined)));
    this.probes = [];
    if (this.dialect === 'postgres') await dropPg(this.name);
    else if (this.dialect === 'mysql') await adminMysql(`DROP DATABASE IF EXISTS ${this.name}`);
    else if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  /** A raw connection to this database (closed by drop()). */
  async probe(): Promise<Probe> {
    const probe = await openProbe(this.dialect, this.location);
    this.probes.push(probe);
    return probe;
  }
}

/** Creates a database, runs `work`, and drops it whatever happens. */
export async function withDatabase<T>(dialect: Dialect, work: (db: BenchDatabase) => Promise<T>): Promise<T> {
  const db = await BenchDatabase.create(dialect);
  try {
    return await work(db);
  } finally {
    await db.drop().catch((err) => console.error(`could not drop ${db.name}: ${(err as Error).message}`));
  }
}

async function openProbe(dialect: Dialect, location: string): Promise<Probe> {
  if (dialect === 'postgres') {
    const client = new pg.Client({ connectionString: location });
    client.on('error', (err) => console.error(`[probe] ${err.message}`));
    await client.connect();
    const query = async <T>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as T[];
    return { query, scalar: async (t, p) => firstNumber(await query(t, p)), close: () => client.end() };
  }
  if (dialect === 'mysql') {
    const conn = await mysql.createConnection({ uri: location, multipleStatements: false });
    const query = async <T>(text: string, params: unknown[] = []) => (await conn.query(text, params))[0] as T[];
    return { query, scalar: async (t, p) => firstNumber(await query(t, p)), close: () => conn.end() };
  }
  const db = new Database(location);
  db.pragma('busy_timeout = 10000');
  const query = async <T>(text: string, params: unknown[] = []) => {
    const stmt = db.prepare(text);
    return (stmt.reader ? stmt.all(...params) : (stmt.run(...params), [])) as T[];
  };
  return { query, scalar: async (t, p) => firstNumber(await query(t, p)), close: async () => void db.close() };
}

function firstNumber(rows: Record<string, unknown>[]): number {
  const row = rows[0];
  return row ? Number(Object.values(row)[0]) : NaN;
}

/** Drops politely first (lingering pool clients get a moment to leave), then with FORCE. */
async function dropPg(name: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await adminPg(`DROP DATABASE IF EXISTS ${name}`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '55006') throw err; // 55006: still in use
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await adminPg(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

export async function adminPg(text: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

export async function adminMysql(text: string): Promise<Record<string, unknown>[]> {
  const conn = await mysql.createConnection({ uri: MYSQL_URL });
  try {
    return (await conn.query(text))[0] as Record<string, unknown>[];
  } finally {
    await conn.end();
  }
}

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Dialect, JobQueueModuleOptions } from '../../lib';

/** Set by global-setup.cjs (defaults match this machine's services). */
export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

export function wantedDialects(): Dialect[] {
  return (process.env.JQ_WANTED_DIALECTS ?? 'postgres,mysql,sqlite').split(',').filter(Boolean) as Dialect[];
}

export function availableDialects(): Dialect[] {
  return (process.env.JQ_AVAILABLE_DIALECTS ?? 'postgres,mysql,sqlite').split(',').filter(Boolean) as Dialect[];
}

/**
 * A database of its own for one spec file (or one worker process tree): a fresh PostgreSQL or
 * MariaDB database, or a SQLite file in a temp directory. Dropped afterwards, so parallel runs
 * and leftovers never collide.
 */
export class TestDatabase {
  readonly name = `jq_t_${process.pid}_${randomBytes(3).toString('hex')}`;
  private sqliteDir: string | undefined;

  constructor(readonly dialect: Dialect) {}

  /** Connection URL (postgres, mysql) or file path (sqlite) of this database. */
  get location(): string {
    switch (this.dialect) {
      case 'postgres':
        return withDatabase(PG_URL, this.name);
      case 'mysql':
        return withDatabase(MYSQL_URL, this.name);
      case 'sqlite':
        return join(this.sqliteDir!, 'jobs.sqlite');
    }
  }

  /** Module options pointing at this database, plus overrides. */
  options(overrides: Partial<JobQueueModuleOptions> = {}): JobQueueModuleOptions {
    return { dialect: this.dialect, url: this.location, ...overrides } as JobQueueModuleOptions;
  }

  async create(): Promise<void> {
    switch (this.dialect) {
      case 'postgres':
        return withPg((c) => c.query(`CREATE DATABASE ${this.name}`).then(() => undefined));
      case 'mysql':
        return withMysql((c) => c.query(`CREATE DATABASE ${this.name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`).then(() => undefined));
      case 'sqlite':
        this.sqliteDir = mkdtempSync(join(tmpdir(), 'jq-'));
    }
  }

  async drop(): Promise<void> {
    switch (this.dialect) {
      case 'postgres':
        return withPg((c) => c.query(`DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`).then(() => undefined));
      case 'mysql':
        return withMysql((c) => c.query(`DROP DATABASE IF EXISTS ${this.name}`).then(() => undefined));
      case 'sqlite':
        if (this.sqliteDir) rmSync(this.sqliteDir, { recursive: true, force: true });
    }
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withPg<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function withMysql<T>(work: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const conn = await mysql.createConnection({ uri: MYSQL_URL });
  try {
    return await work(conn);
  } finally {
    await conn.end();
  }
}

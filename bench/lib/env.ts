import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { adminMysql, adminPg } from './databases';

/** The repository root (this file runs from dist/bench/lib). */
export const ROOT = join(__dirname, '..', '..', '..');

export interface Environment {
  date: string;
  machine: string;
  os: string;
  node: string;
  loadAverage: string;
  servers: Record<string, string>;
  packages: Record<string, string>;
  commit: string;
}

const PACKAGES = ['graphile-worker', 'pg-boss', 'graphile-worker-0.18', 'pg-boss-12', 'bullmq', 'plainjob', 'typeorm', '@nestjs/core', 'pg', 'mysql2', 'better-sqlite3'];

export async function collectEnvironment(): Promise<Environment> {
  const cpu = cpus();
  const servers: Record<string, string> = {};
  servers.PostgreSQL = await adminPg('SHOW server_version')
    .then((r) => String(r[0].server_version))
    .catch((e: Error) => `unavailable (${e.message})`);
  servers.MariaDB = await adminMysql('SELECT VERSION() AS v')
    .then((r) => String(r[0].v))
    .catch((e: Error) => `unavailable (${e.message})`);
  try {
    const mem = new Database(':memory:');
    servers.SQLite = String((mem.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v);
    mem.close();
  } catch (err) {
    // On another Node than the one `npm ci` built the native module for (the Node 22 runs of
    // bench/node22): the PostgreSQL scenarios still run there.
    servers.SQLite = `unavailable (${(err as Error).message.split('\n')[0]})`;
  }
  const ours = readJson(join(ROOT, 'package.json')).version;
  const packages: Record<string, string> = { 'nestjs-sql-job-queue': String(ours) };
  for (const name of PACKAGES) packages[name] = String(readJson(join(ROOT, 'node_modules', name, 'package.json')).version ?? '?');
  return {
    date: new Date().toISOString(),
    machine: `${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM`,
    os: `${type()} ${release()}`,
    node: process.version,
    loadAverage: loadavg()
      .map((l) => l.toFixed(2))
      .join(' / '),
    servers,
    packages,
    commit: gitCommit(),
  };
}

function readJson(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function gitCommit(): string {
  try {
    const head = execSync('git rev-parse --short HEAD', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const dirty = execSync('git status --porcelain -- lib', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    return dirty ? `${head} (lib/ has uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

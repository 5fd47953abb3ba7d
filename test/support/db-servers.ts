import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { MYSQL_URL, PG_URL } from './test-databases';

/**
 * Restarts the machine's own database servers, as an operator (or a crash) would; the same
 * commands TOOLCHAIN.md gives to start them. Only the specs of test/restart use this, and
 * they run alone (phase 2 of npm test).
 */
export async function restartPostgres(): Promise<number> {
  const version = readdirSync('/etc/postgresql')[0];
  const started = Date.now();
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart'], { stdio: 'pipe' });
  await waitUntil(async () => {
    const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 1_000 });
    await c.connect();
    await c.end();
  });
  return Date.now() - started;
}

export async function restartMariadb(): Promise<number> {
  const started = Date.now();
  // --retry waits until the process has exited (SIGTERM is mariadbd's clean shutdown); starting
  // while the old process is still flushing would be a no-op under --oknodo.
  execFileSync('start-stop-daemon', ['--stop', '--exec', MARIADBD, '--retry', 'TERM/60/KILL/5'], { stdio: 'pipe' });
  await ensureMariadbUp();
  return Date.now() - started;
}

/** Stops PostgreSQL (fast shutdown) and returns once it has stopped; ensurePostgresUp starts it again. */
export function stopPostgres(): void {
  const version = readdirSync('/etc/postgresql')[0];
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'stop', '--', '-m', 'fast'], { stdio: 'pipe' });
}

/** Stops MariaDB and returns once the process has exited; ensureMariadbUp starts it again. */
export function stopMariadb(): void {
  execFileSync('start-stop-daemon', ['--stop', '--exec', MARIADBD, '--retry', 'TERM/60/KILL/5'], { stdio: 'pipe' });
}

/** Starts MariaDB if it is not running (the command TOOLCHAIN.md gives), and waits for it. */
export async function ensureMariadbUp(): Promise<void> {
  execFileSync('start-stop-daemon', ['--start', '--oknodo', '--background', '--exec', MARIADBD], { stdio: 'pipe' });
  await waitUntil(async () => {
    const c = await mysql.createConnection({ uri: MYSQL_URL, connectTimeout: 1_000 });
    await c.end();
  });
}

/** Starts PostgreSQL if it is not running, and waits for it. */
export async function ensurePostgresUp(): Promise<void> {
  const version = readdirSync('/etc/postgresql')[0];
  try {
    execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], { stdio: 'pipe' });
  } catch {
    /* already running */
  }
  await waitUntil(async () => {
    const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 1_000 });
    await c.connect();
    await c.end();
  });
}

const MARIADBD = '/usr/sbin/mariadbd';

async function waitUntil(probe: () => Promise<void>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await probe();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

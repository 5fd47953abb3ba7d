import { UnsupportedDatabaseError } from '../errors';
import type { Dialect } from '../job-queue.options';

/** Minimum versions: SKIP LOCKED, RETURNING, recursive CTEs, identity columns, JSON_TABLE (MySQL 8.0.4, waiter polls). */
export const MINIMUM = {
  postgres: [12, 0, 0],
  mysql: [8, 0, 4],
  mariadb: [10, 6, 0],
  sqlite: [3, 35, 0],
} as const;

export interface ServerInfo {
  product: 'PostgreSQL' | 'MySQL' | 'MariaDB' | 'SQLite';
  version: [number, number, number];
}

/** Parses the version string each server reports (`SHOW server_version`, `VERSION()`, `sqlite_version()`). */
export function parseServerVersion(dialect: Dialect, reported: string): ServerInfo {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(reported);
  const version: [number, number, number] = m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : [0, 0, 0];
  if (dialect === 'postgres') return { product: 'PostgreSQL', version };
  if (dialect === 'sqlite') return { product: 'SQLite', version };
  return { product: /mariadb/i.test(reported) ? 'MariaDB' : 'MySQL', version };
}

/** Throws `UnsupportedDatabaseError` for servers older than the minimum of their product. */
export function assertSupportedServer(info: ServerInfo): void {
  const key = info.product === 'PostgreSQL' ? 'postgres' : info.product === 'SQLite' ? 'sqlite' : info.product === 'MariaDB' ? 'mariadb' : 'mysql';
  const min = MINIMUM[key];
  for (let i = 0; i < 3; i++) {
    if (info.version[i] > min[i]) return;
    if (info.version[i] < min[i]) {
      throw new UnsupportedDatabaseError(`${info.product} ${info.version.join('.')}`, `${info.product} ${min.join('.')} or newer`);
    }
  }
}

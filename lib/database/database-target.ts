/** What a DataSource connects to, from its options, as TypeORM reads them. */
export interface DatabaseTargetOptions {
  type?: string;
  url?: string;
  host?: string;
  port?: number;
  database?: unknown;
  socketPath?: string;
}

const NAMES: Record<string, string> = { postgres: 'PostgreSQL', mysql: 'MySQL/MariaDB', mariadb: 'MySQL/MariaDB', 'better-sqlite3': 'SQLite', sqlite: 'SQLite' };
const DEFAULT_PORTS: Record<string, number> = { postgres: 5432, mysql: 3306, mariadb: 3306 };

/**
 * "PostgreSQL at db.internal:5432, database app" / "the SQLite file ./jobs.sqlite": where a
 * start-up tried to connect, for its error. Never the user name or the password: the text goes
 * to logs. A url's parts win over the separate options, as in TypeORM.
 */
export function describeDatabaseTarget(options: DatabaseTargetOptions): string {
  const type = options.type ?? '';
  const name = NAMES[type] ?? (type || 'the database');
  if (name === 'SQLite') return `the SQLite file ${typeof options.database === 'string' ? options.database : '(in memory)'}`;
  let host = options.host;
  let port: number | string | undefined = options.port;
  let database = typeof options.database === 'string' ? options.database : undefined;
  if (options.url) {
    try {
      const url = new URL(options.url);
      // postgresql:///db?host=/var/run/postgresql: a Unix socket directory, as libpq writes it.
      host = url.hostname || url.searchParams.get('host') || host;
      port = url.port || port;
      database = decodeURIComponent(url.pathname.replace(/^\//, '')) || database;
    } catch {
      return `${name} (a url that does not parse)`;
    }
  }
  const where = options.socketPath ? `the socket ${options.socketPath}` : `${host || 'localhost'}:${port || DEFAULT_PORTS[type] || '(default port)'}`;
  return `${name} at ${where}${database ? `, database ${database}` : ''}`;
}

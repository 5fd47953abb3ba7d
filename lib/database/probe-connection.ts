import type { DataSource } from 'typeorm';

/** How long a probe may take to connect before it counts as refused. */
const PROBE_TIMEOUT_MS = 10_000;

interface PgProbeClient {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

interface MysqlProbeConnection {
  connect(callback: (err: Error | null) => void): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  destroy(): void;
  stream?: { destroy(): void };
}

/** The drivers' internals this reaches: pg-pool's client class and settings, mysql2's module and connection settings. */
interface DriverInternals {
  master?: { Client?: new (options: unknown) => PgProbeClient; options?: unknown };
  mysql?: { Connection?: new (options: { config: unknown }) => MysqlProbeConnection };
  pool?: { config?: { connectionConfig?: unknown }; _createConnectionConfig?: () => unknown };
}

/**
 * Opens one connection beside the pool, with the pool's own settings, and closes it at once:
 * whether the server has room for one more right now. Resolves when it had, rejects with the
 * server's refusal (or any failure to connect) otherwise.
 */
export async function probeConnection(dataSource: DataSource): Promise<void> {
  const driver = dataSource.driver as unknown as DriverInternals;
  if (driver.master?.Client) {
    const client = new driver.master.Client(driver.master.options);
    client.on('error', () => undefined); // a late socket error of a connection closing anyway
    await inTime(client.connect(), () => void client.end().catch(() => undefined));
    await client.end().catch(() => undefined);
    return;
  }
  const Connection = driver.mysql?.Connection;
  const pool = driver.pool;
  if (Connection && pool?.config?.connectionConfig) {
    // A copy, as mysql2's pool makes for each of its connections (commands may change it).
    const config = pool._createConnectionConfig ? pool._createConnectionConfig() : pool.config.connectionConfig;
    const connection = new Connection({ config });
    connection.on('error', () => undefined);
    try {
      await inTime(new Promise<void>((resolve, reject) => connection.connect((err) => (err ? reject(err) : resolve()))));
    } finally {
      // mysql2's destroy() only half-closes the socket; nothing more is said on this one.
      connection.destroy();
      connection.stream?.destroy();
    }
    return;
  }
  throw new Error('no connection pool to probe');
}

async function inTime(connecting: Promise<void>, abandon?: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abandon?.();
      reject(new Error(`no connection within ${PROBE_TIMEOUT_MS} ms`));
    }, PROBE_TIMEOUT_MS);
    timer.unref();
  });
  try {
    await Promise.race([connecting, late]);
  } finally {
    clearTimeout(timer);
  }
}

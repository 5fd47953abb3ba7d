import { DataSource, type DataSourceOptions } from 'typeorm';
import { JobDepEntity } from '../entities/job-dep.entity';
import { JobEntity } from '../entities/job.entity';
import { readAutoIncrementStep } from '../enqueue/job-insert.sql';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { runJobQueueMigrations } from '../migrations/migration-runner';
import { assertSchemaCurrent } from '../migrations/schema-check';
import { DatabaseConnectionError } from '../errors/database.errors';
import { describeDatabaseTarget } from './database-target';
import { isHandshakeTimeout } from './db-errors';
import { destroySockets } from './destroy-sockets';
import { boundPgHandshakes, handshakeDeadlineMs } from './handshake-deadline';
import { hearClientErrors } from './hear-client-errors';
import { sqlDialect } from './dialects';
import { JobQueueDatabase } from './job-queue.database';
import { DEFAULT_MAX_RESULT_BYTES } from '../options/resolve-options';
import { fitResultLimit } from './packet-limit';
import { assertSupportedServer, parseServerVersion, type ServerInfo } from './server-version';
import { sql } from './sql';

export const DEFAULT_SQLITE_FILE = './jobs.sqlite';

/**
 * The queue's database handle: its own DataSource (or the application's), checked for a
 * supported server version and migrated before any service uses it.
 */
export class JobQueueConnection {
  private constructor(
    readonly dataSource: DataSource,
    readonly db: JobQueueDatabase,
    readonly server: ServerInfo,
    /** MySQL: the AUTO_INCREMENT step between rows of one insert. */
    readonly autoIncrementStep: number,
    private readonly owned: boolean,
  ) {}

  static async open(options: ResolvedJobQueueOptions): Promise<JobQueueConnection> {
    const shared = options.dataSource && options.dialect !== 'sqlite' ? options.dataSource : undefined;
    const dataSource = shared ?? new DataSource(dataSourceOptions(options));
    if (!shared && options.dialect === 'postgres') boundPgHandshakes(dataSource, handshakeDeadlineMs(options.queryTimeoutMs));
    if (!dataSource.isInitialized) {
      try {
        await dataSource.initialize();
      } catch (err) {
        // The handshake's deadline is only ours to name on a DataSource the queue configured.
        const unansweredMs = !shared && isHandshakeTimeout(err) ? handshakeDeadlineMs(options.queryTimeoutMs) : undefined;
        throw new DatabaseConnectionError(describeDatabaseTarget(dataSource.options), err, unansweredMs);
      }
    }
    if (options.dialect === 'postgres') hearClientErrors(dataSource);
    try {
      const db = new JobQueueDatabase(dataSource, sqlDialect(options.dialect), !shared, options.queryTimeoutMs);
      const server = parseServerVersion(options.dialect, await readVersion(db));
      assertSupportedServer(server);
      if (options.dialect === 'mysql') {
        // A finalize statement is one packet: results must fit the server's max_allowed_packet.
        const { rows } = await db.run(sql`SELECT @@max_allowed_packet AS packet`);
        const isDefault = options.maxResultBytes === DEFAULT_MAX_RESULT_BYTES.mysql;
        options.maxResultBytes = fitResultLimit(options.maxResultBytes, isDefault, Number(rows[0].packet));
      }
      if (options.runMigrations) await runJobQueueMigrations(dataSource, options.dialect);
      else await assertSchemaCurrent(dataSource, options.dialect);
      const step = options.dialect === 'mysql' ? await readAutoIncrementStep(db) : 1;
      return new JobQueueConnection(dataSource, db, server, step, !shared);
    } catch (err) {
      if (!shared) await dataSource.destroy().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Closes the DataSource if the queue created it; a shared one belongs to the application.
   * `inTime` bounds the wait (see ShutdownDeadline): past it, the sockets are closed without
   * waiting for the server's answer.
   */
  async close(inTime: (work: Promise<unknown>, what: string) => Promise<boolean> = (work) => work.then(() => true)): Promise<void> {
    if (!this.owned || !this.dataSource.isInitialized) return;
    this.db.close();
    const closing = this.dataSource.destroy();
    if (await inTime(closing, 'closing the database connections')) return;
    destroySockets(this.dataSource);
    // The pools settle once their sockets are gone; a moment more at most.
    await Promise.race([closing.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  }
}

async function readVersion(db: JobQueueDatabase): Promise<string> {
  const query =
    db.dialect.name === 'postgres'
      ? sql`SHOW server_version`
      : db.dialect.name === 'mysql'
        ? sql`SELECT VERSION() AS server_version`
        : sql`SELECT sqlite_version() AS server_version`;
  const { rows } = await db.run(query);
  return String(rows[0]?.server_version ?? '');
}

function dataSourceOptions(options: ResolvedJobQueueOptions): DataSourceOptions {
  const common = { entities: [JobEntity, JobDepEntity], logging: options.logging, synchronize: false as const };
  switch (options.dialect) {
    case 'postgres':
      return {
        ...common,
        type: 'postgres',
        url: options.url,
        database: options.database,
        poolSize: options.poolSize,
        applicationName: 'nestjs-sql-job-queue',
      };
    case 'mysql':
      return {
        ...common,
        type: 'mysql',
        url: options.url,
        database: options.database,
        poolSize: options.poolSize,
        charset: 'utf8mb4_bin',
        timezone: 'Z',
        // A new connection whose server never answers is given up (mysql2: after 10 s by default).
        connectTimeout: handshakeDeadlineMs(options.queryTimeoutMs),
      };
    case 'sqlite': {
      const shared = options.dataSource?.options as { database?: string } | undefined;
      return {
        ...common,
        type: 'better-sqlite3',
        database: shared?.database ?? options.url ?? options.database ?? DEFAULT_SQLITE_FILE,
        // A short busy wait blocks the event loop only briefly; longer waits are retried asynchronously.
        timeout: options.sqliteBusyTimeoutMs,
        prepareDatabase: (db: { pragma(source: string): unknown }) => {
          db.pragma('journal_mode = WAL'); // readers never block the writer; several processes share the file
          db.pragma('synchronous = NORMAL'); // WAL + NORMAL: durable across process crashes
          db.pragma('foreign_keys = ON');
        },
      };
    }
  }
}

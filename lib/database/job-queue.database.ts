import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource, EntityManager, Logger, QueryRunner } from 'typeorm';
import { Logger as NestLogger } from '@nestjs/common';
import { withinDeadline } from './answer-deadline';
import { capPoolAtOpen } from './cap-pool';
import { LoopTurns } from './loop-turns';
import { isCapacityRefusal, isConnectionError, isSqliteBusy, isTransientConflict } from './db-errors';
import type { SqlDialect } from './dialects';
import { Mutex } from './mutex';
import { PoolRecovery } from './pool-recovery';
import { retrySqliteBusy } from './retry-sqlite-busy';
import type { Sql } from './sql';
import type { Row, SqlExecutor, SqlResult } from './sql-executor';
import { SqliteStatements, type SqliteHandle, type SqliteStatementCounts } from './sqlite-statements';

export interface TransactionOptions {
  /** Fresh attempts after a deadlock, serialization failure or SQLite busy. Default 8. */
  retries?: number;
  /** SQLite: give up at once when another process holds the write lock (the claim retries next tick). */
  failWhenBusy?: boolean;
}

/**
 * The one place that opens transactions. Per dialect:
 * - PostgreSQL: `BEGIN ISOLATION LEVEL READ COMMITTED` (one round trip, whatever the server default);
 * - MySQL/MariaDB: READ COMMITTED, so locking reads and plain reads see the latest commits
 *   (a REPEATABLE READ snapshot would hide a concurrent finalize);
 * - SQLite: `BEGIN IMMEDIATE` takes the write lock up front, behind an in-process mutex because
 *   the DataSource has a single connection. A busy database is retried asynchronously so the
 *   event loop (and with it heartbeats) keeps running.
 * Lock conflicts re-run the whole transaction; callers keep their transactions free of side effects.
 */
export class JobQueueDatabase implements SqlExecutor {
  private readonly logger = new NestLogger('JobQueue');
  private readonly sqliteMutex = new Mutex();
  /** SQLite answers synchronously: a caller's loop of statements must still let the event loop turn. */
  private readonly sqliteTurns = new LoopTurns();
  /** MySQL connections of our own DataSource already switched to READ COMMITTED for the session. */
  private readonly readCommitted = new WeakSet<object>();
  /** SQLite: the statements of the DataSource's one connection (a new handle after a re-initialize). */
  private sqlite?: { handle: SqliteHandle; statements: SqliteStatements };
  /** Raises our own pool back to its size after a refusal lowered it; none on an application's DataSource. */
  readonly poolRecovery?: PoolRecovery;

  constructor(
    readonly dataSource: DataSource,
    readonly dialect: SqlDialect,
    /** The queue created the DataSource: its connections are the queue's to configure. */
    private readonly ownsDataSource = false,
    /** A statement not answered within this is given up with its connection (0: never); see withinDeadline. */
    private readonly queryTimeoutMs = 0,
  ) {
    if (ownsDataSource && dialect.name !== 'sqlite') this.poolRecovery = new PoolRecovery(dataSource);
  }

  /** Stops raising the pool (the DataSource is closing). */
  close(): void {
    this.poolRecovery?.stop();
  }

  /** A single statement in autocommit mode. */
  async run(statement: Sql): Promise<SqlResult> {
    if (this.dialect.name === 'postgres') return this.withPgClient((client) => pgExecute(client, statement, this.dataSource.logger));
    if (this.dialect.name === 'sqlite') {
      await this.sqliteTurns.beforeStatement();
      return this.sqliteMutex.run(() => retrySqliteBusy(async () => this.sqliteStatements().run(statement)));
    }
    return this.withMysqlConnection((connection) => mysqlExecute(connection, statement, this.dataSource.logger));
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const retries = options.retries ?? 8;
    for (let attempt = 0; ; attempt++) {
      try {
        if (this.dialect.name === 'postgres') return await this.withPgClient((client) => this.pgTransaction(client, work));
        if (this.dialect.name === 'sqlite') await this.sqliteTurns.beforeStatement();
        return this.dialect.name === 'sqlite'
          ? await this.sqliteMutex.run(() => this.sqliteTransaction(work, options.failWhenBusy ?? false))
          : await this.withMysqlConnection((connection) => this.mysqlTransaction(connection, work));
      } catch (err) {
        if (attempt >= retries || !isTransientConflict(err) || (options.failWhenBusy && isSqliteBusy(err))) throw err;
        await sleep(backoff(attempt));
      }
    }
  }

  /** Runs statements through the application's EntityManager (its transaction, if any). */
  executorFor(manager: EntityManager): SqlExecutor {
    const dialect = this.dialect;
    return {
      dialect,
      run: async (statement: Sql) => {
        const { text, params } = statement.render(dialect.name);
        const runner = manager.queryRunner;
        if (runner) return toResult(await runner.query(text, params, true));
        return this.withRunnerOf(manager.connection, async (qr) => toResult(await qr.query(text, params, true)));
      },
    };
  }

  private async pgTransaction<T>(client: PgClient, work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    try {
      const result = await work({ dialect: this.dialect, run: (s) => pgExecute(client, s, this.dataSource.logger) });
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  private async mysqlTransaction<T>(connection: MysqlSession, work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const control = (text: string) => connection.query(text, []);
    // On its own DataSource the queue sets READ COMMITTED once per connection, for the session:
    // one round trip less in every claim and finalize transaction (of four or five). On an
    // application's DataSource it must not change the session, so it sets it per transaction.
    if (!this.ownsDataSource) {
      await control('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    } else if (!this.readCommitted.has(connection.pooled)) {
      await control('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
      this.readCommitted.add(connection.pooled);
    }
    await control('START TRANSACTION');
    try {
      const result = await work({ dialect: this.dialect, run: (s) => mysqlExecute(connection, s, this.dataSource.logger) });
      await control('COMMIT');
      return result;
    } catch (err) {
      await control('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  private async sqliteTransaction<T>(work: (tx: SqlExecutor) => Promise<T>, failWhenBusy: boolean): Promise<T> {
    const statements = this.sqliteStatements();
    const begin = async () => statements.runText('BEGIN IMMEDIATE');
    await (failWhenBusy ? begin() : retrySqliteBusy(begin));
    try {
      const result = await work({ dialect: this.dialect, run: async (s) => statements.run(s) });
      statements.runText('COMMIT');
      return result;
    } catch (err) {
      try {
        statements.runText('ROLLBACK');
      } catch {
        // No transaction left to roll back (SQLite ends one itself on some errors).
      }
      throw err;
    }
  }

  /** SQLite: what the statement caches hold (undefined before the first statement, and on other dialects). */
  get sqliteStatementCounts(): SqliteStatementCounts | undefined {
    return this.sqlite?.statements.counts;
  }

  private sqliteStatements(): SqliteStatements {
    const handle = (this.dataSource.driver as unknown as { databaseConnection: SqliteHandle }).databaseConnection;
    if (this.sqlite?.handle !== handle) this.sqlite = { handle, statements: new SqliteStatements(handle, this.dataSource.logger) };
    return this.sqlite.statements;
  }

  /**
   * PostgreSQL: a pooled connection straight from TypeORM's driver, without a QueryRunner. The
   * queue's statements are its own and hot (the claim, the complete, single enqueues); the
   * runner's bookkeeping around each query (subscribers, logging, result wrapping) was about
   * 0.1 ms of every round trip. A broken connection goes back as an error, so the pool drops it;
   * so does one that did not answer in time (its socket closed, the statement failed).
   */
  private async withPgClient<T>(work: (client: PgClient) => Promise<T>): Promise<T> {
    const [pooled, release] = await this.obtain(() => (this.dataSource.driver as unknown as PgDriver).obtainMasterConnection());
    const client: PgClient = {
      query: (text, values) => withinDeadline(pooled.query(text, values), this.queryTimeoutMs, () => pooled.connection?.stream?.destroy()),
      on: (event, listener) => pooled.on(event, listener),
      removeListener: (event, listener) => pooled.removeListener(event, listener),
    };
    // A checked-out client reports a dropped connection as an 'error' event; unheard, that
    // event would crash the process. Heard, it marks the client broken for the release.
    let broken: Error | undefined;
    const onError = (err: Error) => (broken = err);
    client.on('error', onError);
    try {
      return await work(client);
    } catch (err) {
      if (isConnectionError(err)) broken ??= err as Error;
      throw err;
    } finally {
      client.removeListener('error', onError);
      release(broken);
    }
  }

  /**
   * MySQL/MariaDB: a pooled connection straight from TypeORM's driver, as withPgClient. Besides
   * the runner's bookkeeping, TypeORM queries through mysql2's promise wrapper, which captures a
   * stack trace for every query: together 3-4% of a MariaDB chain's whole CPU profile. mysql2's
   * pool drops a connection that failed fatally by itself, and this one one that did not answer
   * in time (destroyed: out of the pool, its statement failed).
   */
  private async withMysqlConnection<T>(work: (connection: MysqlSession) => Promise<T>): Promise<T> {
    const pooled = await this.obtain(() => (this.dataSource.driver as unknown as MysqlDriver).obtainMasterConnection());
    const session: MysqlSession = {
      pooled,
      // destroy() takes it out of the pool but only ends the socket, which a silent peer never
      // acknowledges: the socket is destroyed too.
      query: (text, params) =>
        withinDeadline(mysqlQuery(pooled, text, params), this.queryTimeoutMs, () => {
          pooled.destroy();
          pooled.stream?.destroy();
        }),
    };
    try {
      return await work(session);
    } finally {
      // A no-op once destroyed.
      pooled.release();
    }
  }

  /**
   * A pooled connection. Refused one for capacity, our own pool keeps to the connections it has
   * (see capPoolAtOpen) and this asks again, now waiting for one of them; PoolRecovery raises the
   * limit again once the server has room. Logged once per episode: a raised limit the server
   * refuses again is part of the recovery's probing, not news.
   */
  private async obtain<T>(get: () => Promise<T>): Promise<T> {
    try {
      return await get();
    } catch (err) {
      if (!this.poolRecovery || !isCapacityRefusal(err)) throw err;
      const capped = capPoolAtOpen(this.dataSource, this.dialect.name === 'postgres' ? 2 : 1);
      if (!capped) throw err;
      if (capped.limit < capped.was) {
        if (!this.poolRecovery.lowered) {
          this.logger.warn(
            `the database refused a new connection (${(err as Error).message}): the queue's pool keeps to the ${capped.limit} it has, and grows back once the database has room`,
          );
        }
        this.poolRecovery.onLowered(capped.was);
      }
      return get();
    }
  }

  private async withRunnerOf<T>(dataSource: DataSource, work: (qr: QueryRunner) => Promise<T>): Promise<T> {
    const qr = dataSource.createQueryRunner();
    let failure: unknown;
    try {
      return await work(qr);
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      // A broken pg connection goes back to the pool as an error, so the pool discards it
      // (mysql2's pool drops errored connections by itself).
      const pgRunner = qr as QueryRunner & { releasePostgresConnection?: (err?: unknown) => Promise<void> };
      const release =
        failure !== undefined && isConnectionError(failure) && pgRunner.releasePostgresConnection
          ? pgRunner.releasePostgresConnection(failure)
          : qr.release();
      await release.catch(() => undefined);
    }
  }
}

interface PgClient {
  /** pg's socket, closed when a statement gets no answer in time. */
  connection?: { stream?: { destroy(): void } };
  query(text: string, values?: unknown[]): Promise<{ rows: Row[]; rowCount: number | null }>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  removeListener(event: 'error', listener: (err: Error) => void): unknown;
}

interface PgDriver {
  obtainMasterConnection(): Promise<[PgClient, (err?: Error) => void]>;
}

interface MysqlConnection {
  query(text: string, values: unknown[], callback: (err: Error | null, result: unknown) => void): unknown;
  release(): void;
  /** Takes the connection out of its pool and ends its socket. */
  destroy(): void;
  stream?: { destroy(): void };
}

/** A checked-out MySQL connection whose statements answer within the deadline. */
interface MysqlSession {
  readonly pooled: MysqlConnection;
  query(text: string, params: unknown[]): Promise<unknown>;
}

interface MysqlDriver {
  obtainMasterConnection(): Promise<MysqlConnection>;
}

function mysqlQuery(connection: MysqlConnection, text: string, params: unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => connection.query(text, params, (err, result) => (err ? reject(err) : resolve(result))));
}

/** One statement on a checked-out MySQL connection, through TypeORM's logger like its own queries. */
async function mysqlExecute(connection: MysqlSession, statement: Sql, logger: Logger): Promise<SqlResult> {
  const { text, params } = statement.render('mysql');
  logger.logQuery(text, params);
  let raw: unknown;
  try {
    raw = await connection.query(text, params);
  } catch (err) {
    logger.logQueryError(err as Error, text, params);
    throw err;
  }
  // Rows for a SELECT, the result sets for a CALL, a status header for a write.
  const header = raw as { affectedRows?: number };
  return toResult({ records: Array.isArray(raw) ? raw : [], affected: Array.isArray(raw) ? 0 : (header.affectedRows ?? 0), raw });
}

/** Runs one statement on a checked-out client, through TypeORM's logger like its own queries. */
async function pgExecute(client: PgClient, statement: Sql, logger: Logger): Promise<SqlResult> {
  const { text, params } = statement.render('postgres');
  logger.logQuery(text, params);
  try {
    const result = await client.query(text, params);
    return { rows: result.rows, affected: result.rowCount ?? 0 };
  } catch (err) {
    logger.logQueryError(err as Error, text, params);
    throw err;
  }
}

function toResult(result: { records?: unknown[]; affected?: number; raw?: unknown }): SqlResult {
  const raw = result.raw as { insertId?: number | string } | undefined;
  const insertId = raw && typeof raw === 'object' && 'insertId' in raw ? Number(raw.insertId) : undefined;
  return {
    rows: (Array.isArray(result.records) ? result.records : []) as SqlResult['rows'],
    affected: result.affected ?? 0,
    insertId,
  };
}

function backoff(attempt: number): number {
  return Math.random() * Math.min(1_000, 5 * 2 ** attempt);
}

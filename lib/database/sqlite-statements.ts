import type { Logger } from 'typeorm';
import type { SqlResult } from './sql-executor';

/** The part of a better-sqlite3 statement the queue uses. */
interface SqliteStatement {
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}

/** The part of a better-sqlite3 database handle the queue uses. */
export interface SqliteHandle {
  prepare(text: string): SqliteStatement;
}

/**
 * Statements prepared once per text and kept, most recently used last. Past this many the least
 * recently used goes: the queue's own statements are a few hundred shapes at most (a list's
 * length is part of the text), and re-preparing one costs tens of microseconds.
 */
const CACHE_SIZE = 1_000;

/**
 * The queue's SQLite statements straight on better-sqlite3, without a TypeORM QueryRunner (as
 * PostgreSQL and MySQL already run theirs on the driver's connection). The runner's bookkeeping
 * around each statement (subscribers, timing, result wrapping, several awaits) was about a third
 * of a chain link's Node CPU, and its statement cache keeps only 100 texts, first in first out.
 * Synchronous, as the driver is: callers hold the queue's SQLite mutex.
 */
export class SqliteStatements {
  private readonly cache = new Map<string, SqliteStatement>();

  constructor(
    private readonly handle: SqliteHandle,
    private readonly logger: Logger,
  ) {}

  run(text: string, params: readonly unknown[]): SqlResult {
    this.logger.logQuery(text, params as unknown[]);
    try {
      const statement = this.prepared(text);
      const bound = params.map(bindable);
      if (statement.reader) return { rows: statement.all(...bound) as SqlResult['rows'], affected: 0 };
      return { rows: [], affected: statement.run(...bound).changes };
    } catch (err) {
      this.logger.logQueryError(err as Error, text, params as unknown[]);
      throw err;
    }
  }

  private prepared(text: string): SqliteStatement {
    let statement = this.cache.get(text);
    if (statement) {
      // Most recently used last: Map keeps insertion order.
      this.cache.delete(text);
    } else {
      statement = this.handle.prepare(text);
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    }
    this.cache.set(text, statement);
    return statement;
  }
}

/** better-sqlite3 binds no booleans. */
function bindable(value: unknown): unknown {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

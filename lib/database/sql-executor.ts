import type { SqlDialect } from './dialects';
import type { Sql } from './sql';

export type Row = Record<string, unknown>;

export interface SqlResult {
  rows: Row[];
  /** Rows changed by an INSERT/UPDATE/DELETE. */
  affected: number;
  /** MySQL: the first AUTO_INCREMENT id of an INSERT. */
  insertId?: number;
}

/** Runs statements on one connection: a transaction, the pool in autocommit, or the app's own transaction. */
export interface SqlExecutor {
  readonly dialect: SqlDialect;
  run(statement: Sql): Promise<SqlResult>;
}

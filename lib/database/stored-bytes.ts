import type { SqlDialect } from './dialects';
import { sql, type Sql } from './sql';

/**
 * Bytes of one stored text column, without reading it out: what its full read weighs (a
 * JavaScript string of it has at most as many characters). PostgreSQL takes a text's length from
 * its TOAST header, SQLite's octet_length() from the record header (unless the statement sorts);
 * MySQL's LENGTH() reads an off-page value on the server to measure it. NULL stays NULL.
 */
export function valueBytes(d: SqlDialect, column: string): Sql {
  const c = sql.raw(column);
  return d.name === 'mysql' ? sql`LENGTH(${c})` : sql`octet_length(${c})`;
}

/** Bytes of a row's args and result as stored (see valueBytes). */
export function storedBytes(d: SqlDialect, alias = ''): Sql {
  return sql`${valueBytes(d, `${alias}args`)} + COALESCE(${valueBytes(d, `${alias}result`)}, 0)`;
}

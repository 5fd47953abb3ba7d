import type { SqlDialect } from './dialects';
import { sql, type Sql } from './sql';

/**
 * Bytes of a row's args and result as stored, without reading them out: what its full read
 * weighs (a JavaScript string of that JSON has at most as many characters). PostgreSQL takes a
 * text's length from its TOAST header, SQLite's octet_length() from the record header (unless
 * the statement sorts); MySQL's LENGTH() reads an off-page value on the server to measure it.
 */
export function storedBytes(d: SqlDialect, alias = ''): Sql {
  const a = sql.raw(`${alias}args`);
  const r = sql.raw(`${alias}result`);
  return d.name === 'mysql' ? sql`LENGTH(${a}) + COALESCE(LENGTH(${r}), 0)` : sql`octet_length(${a}) + COALESCE(octet_length(${r}), 0)`;
}

import { sql, type Sql } from '../sql';
import { parseUtcText, utcText, type SqlDialect } from './sql-dialect';

const FORMAT = `'%Y-%m-%d %H:%M:%f'`;

export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  supportsReturning: true,
  // Times are UTC text 'YYYY-MM-DD HH:MM:SS.SSS', which sorts and compares correctly as text.
  now: () => sql`strftime(${sql.raw(FORMAT)}, 'now')`,
  addMs: (time: Sql, ms: Sql | number) =>
    sql`strftime(${sql.raw(FORMAT)}, ${time}, ((${ms}) / 1000.0) || ' seconds')`,
  diffMs: (from: Sql, to: Sql) => sql`((julianday(${to}) - julianday(${from})) * 86400000.0)`,
  timeParam: (date: Date) => utcText(date),
  parseTime: parseUtcText,
  selectTime: (column: string) => sql`${sql.raw(column)}`,
};

import { sql, type Sql } from '../sql';
import type { SqlDialect } from './sql-dialect';

export const postgresDialect: SqlDialect = {
  name: 'postgres',
  supportsReturning: true,
  // now() is the transaction's start; our transactions are short, and one clock reading per
  // transaction keeps every row it writes consistent.
  now: () => sql`now()`,
  addMs: (time: Sql, ms: Sql | number) =>
    typeof ms === 'number' ? sql`(${time} + ${ms}::float8 * interval '1 millisecond')` : sql`(${time} + ${ms} * interval '1 millisecond')`,
  diffMs: (from: Sql, to: Sql) => sql`(extract(epoch from (${to} - ${from})) * 1000)`,
  timeParam: (date: Date) => date.toISOString(),
  parseTime: (value: unknown) => (value == null ? null : value instanceof Date ? value : new Date(String(value))),
  selectTime: (column: string) => sql`${sql.raw(column)}`,
};

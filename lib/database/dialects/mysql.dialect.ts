import { sql, type Sql } from '../sql';
import { parseUtcText, utcText, type SqlDialect } from './sql-dialect';

export const mysqlDialect: SqlDialect = {
  name: 'mysql',
  supportsReturning: false,
  // UTC_TIMESTAMP ignores the session time zone, so a shared DataSource with any `timezone`
  // setting still writes UTC.
  now: () => sql`UTC_TIMESTAMP(3)`,
  addMs: (time: Sql, ms: Sql | number) => sql`(${time} + INTERVAL (${ms}) * 1000 MICROSECOND)`,
  diffMs: (from: Sql, to: Sql) => sql`(TIMESTAMPDIFF(MICROSECOND, ${from}, ${to}) / 1000)`,
  timeParam: (date: Date) => utcText(date),
  parseTime: parseUtcText,
  // CAST AS CHAR sidesteps the driver's time-zone conversion of DATETIME values.
  selectTime: (column: string) => sql`CAST(${sql.raw(column)} AS CHAR)`,
};

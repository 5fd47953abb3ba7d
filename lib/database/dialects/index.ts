import type { Dialect } from '../../job-queue.options';
import { mysqlDialect } from './mysql.dialect';
import { postgresDialect } from './postgres.dialect';
import { sqliteDialect } from './sqlite.dialect';
import type { SqlDialect } from './sql-dialect';

export type { SqlDialect } from './sql-dialect';

export function sqlDialect(name: Dialect): SqlDialect {
  return name === 'postgres' ? postgresDialect : name === 'mysql' ? mysqlDialect : sqliteDialect;
}

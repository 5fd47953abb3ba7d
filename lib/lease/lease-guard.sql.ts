import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';

/**
 * This worker's running job: the guard every finalize write carries, and what makes finalize
 * exactly-once (a job reclaimed, cancelled or timed out no longer matches).
 *
 * On PostgreSQL the state test is written `state || ''` so that it cannot match the partial
 * in-flight index: matched, and with statistics from a quiet moment, the planner scans every
 * worker's in-flight rows instead of probing the primary key per job (see migration 5).
 */
export function ownedBy(d: SqlDialect, owner: string, alias = ''): Sql {
  const c = (column: string) => sql.raw(alias ? `${alias}.${column}` : column);
  const state = d.name === 'postgres' ? sql`${c('state')} || ''` : sql`${c('state')}`;
  return sql`${c('lease_owner')} = ${owner} AND ${state} = 'running'`;
}

import { sql, type Sql } from '../database/sql';
import type { SqlDialect } from '../database/dialects';
import type { ClaimRequest } from './claim-request';

/** The SET list shared by every dialect's claim. */
export function leaseAssignments(dialect: SqlDialect, request: ClaimRequest): Sql {
  const now = dialect.now();
  return sql`state = ${sql.raw(request.start ? `'running'` : `'leased'`)},
    lease_owner = ${request.owner},
    lease_expires = ${dialect.addMs(now, request.leaseTtlMs)},
    heartbeat_at = ${now},
    attempts = attempts + 1,
    started_at = ${request.start ? now : sql`started_at`},
    updated_at = ${now}`;
}

/** The WHERE of a claimable row. The `'ready'` literal lets the planner match the partial index. */
export function claimableFilter(dialect: SqlDialect, types: readonly string[], group: string | undefined, alias = ''): Sql {
  const c = (column: string) => sql.raw(alias ? `${alias}.${column}` : column);
  const typeFilter =
    dialect.name === 'postgres' ? sql`${c('type')} = ANY(${[...types]}::text[])` : sql`${c('type')} IN (${sql.list(types)})`;
  return sql`${c('state')} = 'ready' AND ${c('run_after')} <= ${dialect.now()} AND ${typeFilter}${
    group === undefined ? sql`` : sql` AND ${c('group_key')} = ${group}`
  }`;
}

/** ` AND group_key NOT IN (…)` for paused groups; empty when none is paused. */
export function pausedGroupsFilter(dialect: SqlDialect, groups: readonly string[] | undefined): Sql {
  if (!groups?.length) return sql``;
  return dialect.name === 'postgres' ? sql` AND group_key <> ALL(${[...groups]}::text[])` : sql` AND group_key NOT IN (${sql.list(groups)})`;
}

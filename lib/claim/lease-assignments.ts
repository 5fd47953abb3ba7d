import { sql, type Sql } from '../database/sql';
import type { SqlDialect } from '../database/dialects';
import type { ClaimRequest } from './claim-request';

/** The SET list shared by every dialect's claim. */
export function leaseAssignments(dialect: SqlDialect, request: ClaimRequest): Sql {
  // PostgreSQL's now() is the transaction's start: a claim that waited for a cap's or a rate
  // window's lock would date its lease (and `started_at`) before the moment it was granted.
  const now = dialect.name === 'postgres' ? sql`clock_timestamp()` : dialect.now();
  return sql`state = ${sql.raw(request.start ? `'running'` : `'leased'`)},
    lease_owner = ${request.owner},
    lease_expires = ${dialect.addMs(now, request.leaseTtlMs)},
    heartbeat_at = ${now},
    attempts = attempts + 1,
    started_at = ${request.start ? admittedAt(dialect, request) ?? now : sql`started_at`},
    updated_at = ${now}`;
}

/** The time a rate-limited claim was admitted, as a bound time value; undefined otherwise. */
function admittedAt(dialect: SqlDialect, request: ClaimRequest): Sql | undefined {
  if (request.admittedAtMs === undefined) return undefined;
  const value = dialect.timeParam(new Date(Math.floor(request.admittedAtMs)));
  return dialect.name === 'postgres' ? sql`${value}::timestamptz` : sql`${value}`;
}

/** ` AND group_key NOT IN (…)` for paused groups; empty when none is paused. */
export function pausedGroupsFilter(dialect: SqlDialect, groups: readonly string[] | undefined): Sql {
  if (!groups?.length) return sql``;
  return dialect.name === 'postgres' ? sql` AND group_key <> ALL(${[...groups]}::text[])` : sql` AND group_key NOT IN (${sql.list(groups)})`;
}

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

/**
 * The WHERE of a claimable row. The `'ready'` literal lets the planner match the partial index.
 * On PostgreSQL the type is compared as `type || ''`, which find()'s `(type, id)` index cannot
 * serve: with statistics from a quiet moment the planner otherwise bitmap-scans that index and
 * sorts every ready row of the type instead of walking the ready index in claim order.
 */
export function claimableFilter(dialect: SqlDialect, types: readonly string[], group: string | undefined, alias = ''): Sql {
  const c = (column: string) => sql.raw(alias ? `${alias}.${column}` : column);
  const typeFilter =
    dialect.name === 'postgres' ? sql`(${c('type')} || '') = ANY(${[...types]}::text[])` : sql`${c('type')} IN (${sql.list(types)})`;
  return sql`${c('state')} = 'ready' AND ${c('run_after')} <= ${dialect.now()} AND ${typeFilter}${
    group === undefined ? sql`` : sql` AND ${c('group_key')} = ${group}`
  }`;
}

/** ` AND group_key NOT IN (…)` for paused groups; empty when none is paused. */
export function pausedGroupsFilter(dialect: SqlDialect, groups: readonly string[] | undefined): Sql {
  if (!groups?.length) return sql``;
  return dialect.name === 'postgres' ? sql` AND group_key <> ALL(${[...groups]}::text[])` : sql` AND group_key NOT IN (${sql.list(groups)})`;
}

/**
 * MySQL/SQLite: pins a group's claim to the ready group index. Beside it, the query indexes of
 * find() (state, id), (type, id), (group_key, id) look attractive to these planners (an equality
 * on state, an index-merge with the group), and with them the claim would sort, and on MySQL
 * lock, every ready row. A claim of any group probes the ready index per type
 * (ready-by-type.sql.ts). PostgreSQL's claim pins its plan by other means (migration 4).
 */
export function readyIndexHint(dialect: SqlDialect, group: string | undefined): Sql {
  const index = group === undefined ? 'jobs_ready_idx' : 'jobs_ready_group_idx';
  if (dialect.name === 'mysql') return sql`${sql.raw(` FORCE INDEX (${index})`)}`;
  if (dialect.name === 'sqlite') return sql`${sql.raw(` INDEXED BY ${index}`)}`;
  return sql``;
}

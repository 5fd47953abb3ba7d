import type { SqlDialect } from '../database/dialects';
import { chunked, sql, type Sql } from '../database/sql';
import { pausedGroupsFilter } from './lease-assignments';

/**
 * Types one statement probes at most on MySQL and SQLite (one UNION arm each; SQLite allows 500
 * arms in a compound SELECT). A worker with more handlers runs one statement per slice and keeps
 * the best rows of all (selectClaimCandidates). PostgreSQL binds the types as one array.
 */
export const TYPES_PER_PROBE = 50;

export interface ReadyProbe {
  /** The select list (it must contain `priority` and `id`, which order the result). */
  columns: Sql;
  /** Only this group (a group's quota); omitted = any group. */
  group?: string;
  /** Paused groups to step over. */
  excludeGroups?: readonly string[];
  /** Lock the rows read (`FOR UPDATE SKIP LOCKED`; nothing on SQLite, whose write lock is the claim's). */
  lock: boolean;
}

/**
 * The best `limit` ready rows among `types`, of any group or of one, by priority (highest first),
 * then id.
 *
 * The ready index leads with the type (migration: `jobs_ready_idx` by type), and every type is
 * read from its own stretch of it, at most `limit` rows each; the statement keeps the best
 * `limit` of those. So a claim reads no row of a type it does not handle: a backlog of another
 * worker's types, a million rows deep, costs this claim nothing (before, it walked the whole
 * backlog in priority order to find its own rows, 390 ms per claim on PostgreSQL at a million).
 * With several types that all have ready rows, up to `limit` rows per type are read and locked,
 * and those not kept are released at the claim's commit (other claimers skip them meanwhile).
 *
 * Callers pass at most TYPES_PER_PROBE types on MySQL and SQLite.
 */
export function readyByTypeStatement(d: SqlDialect, types: readonly string[], limit: number, probe: ReadyProbe): Sql {
  if (!types.length) throw new Error('readyByTypeStatement needs at least one type');
  if (d.name !== 'postgres' && types.length > TYPES_PER_PROBE) {
    throw new Error(`readyByTypeStatement takes at most ${TYPES_PER_PROBE} types per statement on ${d.name}, got ${types.length}`);
  }
  const lock = probe.lock && d.name !== 'sqlite' ? sql` FOR UPDATE SKIP LOCKED` : sql``;
  // A group's quota: its rows of the type, from the (group, type) ready index; paused groups
  // are never named by a quota.
  const where = probe.group === undefined ? pausedGroupsFilter(d, probe.excludeGroups) : sql` AND group_key = ${probe.group}`;
  const index = probe.group === undefined ? 'jobs_ready_idx' : 'jobs_ready_group_idx';
  if (d.name === 'postgres') {
    if (types.length === 1) return arm(d, index, probe.columns, sql`${types[0]}`, where, limit, lock);
    // One LATERAL probe per type; `type = q.type` is an index condition of the ready index, whose
    // order (type, priority DESC, id) then serves the probe's ORDER BY without a sort.
    return sql`SELECT p.* FROM unnest(${[...types]}::text[]) AS q (type)
      CROSS JOIN LATERAL (${arm(d, index, probe.columns, sql`q.type`, where, limit, lock)}) p
      ORDER BY p.priority DESC, p.id LIMIT ${limit}`;
  }
  const arms = types.map((t) => arm(d, index, probe.columns, sql`${t}`, where, limit, lock));
  if (arms.length === 1) return arms[0];
  // Each arm keeps its own ORDER BY and LIMIT: parenthesized on MySQL, a subquery on SQLite.
  const wrapped = arms.map((a) => (d.name === 'mysql' ? sql`(${a})` : sql`SELECT * FROM (${a})`));
  return sql`${sql.join(wrapped, ' UNION ALL ')} ORDER BY priority DESC, id LIMIT ${limit}`;
}

/** Slices of `types` small enough for one readyByTypeStatement on this dialect. */
export function typeSlices(d: SqlDialect, types: readonly string[]): string[][] {
  return d.name === 'postgres' ? [[...types]] : chunked(types, TYPES_PER_PROBE);
}

/**
 * One type's ready rows in claim order. The hint pins the ready index on MySQL and SQLite: their
 * planners also like find()'s (type, id) index for `type = ?`, and with it would sort (and on
 * MySQL lock) every ready row of the type.
 */
function arm(d: SqlDialect, index: string, columns: Sql, type: Sql, where: Sql, limit: number, lock: Sql): Sql {
  const hint = d.name === 'mysql' ? sql.raw(` FORCE INDEX (${index})`) : d.name === 'sqlite' ? sql.raw(` INDEXED BY ${index}`) : sql.raw('');
  const order = d.name === 'mysql' ? sql`neg_priority, id` : sql`priority DESC, id`;
  return sql`SELECT ${columns} FROM jobs${hint}
    WHERE state = 'ready' AND type = ${type} AND run_after <= ${d.now()}${where}
    ORDER BY ${order} LIMIT ${limit}${lock}`;
}

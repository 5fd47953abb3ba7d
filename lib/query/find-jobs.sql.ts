import type { SqlDialect } from '../database/dialects';
import { jobColumns } from '../database/job-row';
import { sql, type Sql } from '../database/sql';
import { flattenArgsContains, jsonPath, type ArgsCondition } from './args-filter';
import type { NormalizedFilter } from './job-filter';
import { SLOT_KEY_PREFIX, SLOT_KEY_TAIL, slotKeyPrefix } from '../recurring/slot-key';

/**
 * Rows one `find` call examines at most when the filter has a condition no index serves
 * (`errorContains`, the created range, and `argsContains` on MySQL/MariaDB and SQLite).
 */
export const SCAN_WINDOW = 10_000;

/**
 * Whether the filter has a condition no index serves on this dialect. Such a condition is
 * checked on a bounded window of rows, newest first, picked by the indexed conditions.
 */
export function needsWindow(d: SqlDialect, f: NormalizedFilter): boolean {
  return f.errorContains !== undefined || f.createdAfter !== undefined || f.createdBefore !== undefined || (f.argsContains !== undefined && d.name !== 'postgres');
}

/**
 * The conditions indexes serve: state (state, id), type (type, id), group (group_key, id),
 * parent (parent_id, id), key (unique), worker (the in-flight rows of the state index), schedule
 * (see scheduleConditions), and on PostgreSQL argsContains (GIN on args::jsonb).
 */
function indexedConditions(d: SqlDialect, f: NormalizedFilter, alias: string): Sql[] {
  const c = (column: string) => sql.raw(alias ? `${alias}.${column}` : column);
  const where: Sql[] = [];
  if (f.states) where.push(sql`${c('state')} IN (${sql.list(f.states)})`);
  if (f.types) where.push(sql`${c('type')} IN (${sql.list(f.types)})`);
  if (f.group !== undefined) where.push(sql`${c('group_key')} = ${f.group}`);
  if (f.parentId !== undefined) where.push(sql`${c('parent_id')} = ${f.parentId}`);
  if (f.key !== undefined) where.push(sql`${c('job_key')} = ${f.key}`);
  if (f.schedule !== undefined) where.push(...scheduleConditions(d, f.schedule, alias ? `${alias}.job_key` : 'job_key'));
  if (f.worker !== undefined) {
    // Only in-flight rows carry a lease owner, and they are few: read them through the state
    // index (PostgreSQL's in-flight branch, see branches()) and compare the owner there.
    if (d.name !== 'postgres') where.push(sql`${c('state')} IN ('leased', 'running')`);
    where.push(sql`${c('lease_owner')} = ${f.worker}`);
  }
  // The expression matches the GIN index's `(args::jsonb)` exactly, so the planner can use it.
  if (f.argsContains && d.name === 'postgres') where.push(sql`(${c('args')}::jsonb) @> ${JSON.stringify(f.argsContains)}::jsonb`);
  return where;
}

/**
 * The jobs of one schedule's slots, keyed `recurring:<name>:<slot>` (lib/recurring/slot-key.ts):
 * the key without its last 25 characters is the prefix, and the first of those is the `:`.
 * PostgreSQL and SQLite index that cut with the id (migrations 44 and 26, slot keys only), so a
 * page reads its own rows; the expressions and the partial predicate are written out here as in
 * the migrations, for the planners to match them. MySQL/MariaDB reads the key's unique index over
 * the range of keys that start with `<prefix>:` (its columns are utf8mb4_bin: bytes) and keeps
 * those of this name's length, so `a` leaves out the slots of `a:b`; it sorts the schedule's jobs.
 */
function scheduleConditions(d: SqlDialect, name: string, key: string): Sql[] {
  const prefix = slotKeyPrefix(name);
  if (d.name === 'mysql') {
    return [sql`${sql.raw(key)} >= ${`${prefix}:`} AND ${sql.raw(key)} < ${`${prefix};`} AND CHAR_LENGTH(${sql.raw(key)}) = ${prefix.length + SLOT_KEY_TAIL}`];
  }
  const cut = d.name === 'postgres' ? `left(${key}, -${SLOT_KEY_TAIL})` : `substr(${key}, 1, length(${key}) - ${SLOT_KEY_TAIL})`;
  return [
    sql`${sql.raw(`substr(${key}, 1, ${SLOT_KEY_PREFIX.length}) = '${SLOT_KEY_PREFIX}'`)}`,
    sql`${sql.raw(cut)} = ${prefix}`,
    sql`${sql.raw(`substr(${key}, length(${key}) - ${SLOT_KEY_TAIL - 1}, 1) = ':'`)}`,
  ];
}

function scannedConditions(d: SqlDialect, f: NormalizedFilter, alias: string): Sql[] {
  const c = (column: string) => sql.raw(alias ? `${alias}.${column}` : column);
  const where: Sql[] = [];
  if (f.errorContains !== undefined) {
    // Case-sensitive everywhere (MySQL's columns are utf8mb4_bin); no LIKE, so no escaping.
    const error = c('last_error');
    where.push(
      d.name === 'postgres'
        ? sql`strpos(${error}, ${f.errorContains}) > 0`
        : d.name === 'mysql'
          ? sql`LOCATE(${f.errorContains}, ${error}) > 0`
          : sql`instr(${error}, ${f.errorContains}) > 0`,
    );
  }
  if (f.createdAfter) where.push(sql`${c('created_at')} >= ${d.timeParam(f.createdAfter)}`);
  if (f.createdBefore) where.push(sql`${c('created_at')} < ${d.timeParam(f.createdBefore)}`);
  if (f.argsContains && d.name === 'mysql') where.push(sql`JSON_CONTAINS(${c('args')}, ${JSON.stringify(f.argsContains)})`);
  if (f.argsContains && d.name === 'sqlite') {
    // Like `@>`: only an object contains an object (`{}` included), never null or an array.
    where.push(sql`json_type(${c('args')}) = 'object'`, ...flattenArgsContains(f.argsContains).map((cond) => sqliteArgsCondition(cond, c('args'))));
  }
  return where;
}

/** One leaf of argsContains with SQLite's JSON1 functions: value and JSON type both match. */
function sqliteArgsCondition(cond: ArgsCondition, args: Sql | ReturnType<typeof sql.raw>): Sql {
  const path = jsonPath(cond.path);
  if (cond.kind === 'is') return sql`json_type(${args}, ${path}) = ${cond.jsonType}`;
  if (cond.kind === 'equals') return scalarMatch(sql`json_type(${args}, ${path})`, sql`json_extract(${args}, ${path})`, cond.value);
  return sql`json_type(${args}, ${path}) = 'array' AND EXISTS (SELECT 1 FROM json_each(${args}, ${path}) e WHERE ${scalarMatch(sql`e.type`, sql`e.value`, cond.value)})`;
}

function scalarMatch(type: Sql, value: Sql, expected: string | number | boolean | null): Sql {
  if (expected === null) return sql`${type} = 'null'`;
  if (expected === true) return sql`${type} = 'true'`;
  if (expected === false) return sql`${type} = 'false'`;
  if (typeof expected === 'number') return sql`${type} IN ('integer', 'real') AND ${value} = ${expected}`;
  return sql`${type} = 'text' AND ${value} = ${expected}`;
}

/**
 * The index a MariaDB/MySQL or SQLite read must take. A worker's jobs: the state index (below).
 * MariaDB/MySQL: with two or more of state, type, group and parent given, the planner intersects
 * their indexes and sorts every match (measured: 1.4 s for state+type at 1M rows; 30,000 index
 * reads for a page of a 10,000-child container's done children). One index read newest first and
 * filtered is far cheaper: the parent (a container's children, bounded by its size), else the
 * group (most selective in practice, a tenant), else a single state, else a single type. A key
 * picks one row through its unique index, so a key is left to the planner.
 */
function indexHint(d: SqlDialect, f: NormalizedFilter): Sql {
  if (d.name === 'postgres' || f.key !== undefined) return sql``;
  // A worker's jobs are among the few in-flight rows; both planners otherwise chose a group's or
  // a type's index and walked its whole range for them.
  if (f.worker !== undefined) return sql`${sql.raw(d.name === 'mysql' ? ' USE INDEX (jobs_state_id_idx)' : ' INDEXED BY jobs_state_id_idx')}`;
  // A schedule's jobs are bounded by its slots; a state's or a type's index may hold millions.
  if (f.schedule !== undefined) return sql`${sql.raw(d.name === 'mysql' ? ' USE INDEX (jobs_job_key_uq)' : ' INDEXED BY jobs_find_schedule_idx')}`;
  if (d.name !== 'mysql') return sql``;
  const given = [f.states, f.types, f.group, f.parentId].filter((x) => x !== undefined).length;
  if (given < 2) return sql``;
  const index =
    f.parentId !== undefined
      ? 'jobs_parent_idx'
      : f.group !== undefined
        ? 'jobs_group_id_idx'
        : f.states?.length === 1
          ? 'jobs_state_id_idx'
          : f.types?.length === 1
            ? 'jobs_type_id_idx'
            : 'jobs_state_id_idx';
  return sql`${sql.raw(` USE INDEX (${index})`)}`;
}

function and(parts: Sql[]): Sql {
  return parts.length ? sql`WHERE ${sql.join(parts, ' AND ')}` : sql``;
}

/**
 * PostgreSQL's find indexes leave out leased and running rows (migration 12): a claim and every
 * heartbeat rewrite those rows, and entries for them in four more indexes cost the claim path
 * about a quarter of its throughput. In-flight rows are few by construction (at most the
 * cluster's slots and prefetch), so their branch reads `jobs_in_flight_idx` and sorts. The
 * predicates are written out, not bound, so the planner can match the partial indexes.
 */
const SETTLED_OR_WAITING = sql.raw(`state NOT IN ('leased', 'running')`);
const IN_FLIGHT = sql.raw(`state IN ('leased', 'running')`);
const IN_FLIGHT_STATES: readonly string[] = ['leased', 'running'];

/** The extra predicate of each branch a PostgreSQL find reads; one empty branch elsewhere. */
function branches(d: SqlDialect, f: NormalizedFilter): Sql[][] {
  if (d.name !== 'postgres') return [[]];
  // A worker holds in-flight rows only; the other branch would walk the table for its owner.
  if (f.worker !== undefined) return [[sql`${IN_FLIGHT}`]];
  const flight = f.states ? f.states.some((s) => IN_FLIGHT_STATES.includes(s)) : true;
  const rest = f.states ? f.states.some((s) => !IN_FLIGHT_STATES.includes(s)) : true;
  return [...(rest ? [[sql`${SETTLED_OR_WAITING}`]] : []), ...(flight ? [[sql`${IN_FLIGHT}`]] : [])];
}

/**
 * `SELECT columns FROM jobs WHERE … ORDER BY id DESC LIMIT n`, as one statement or, on
 * PostgreSQL when a filter spans in-flight and other rows, the newest `n` of two branches.
 * `orderBy` `id + 0` sorts the same way but hides the primary key's order from the planner, so
 * that it reads the matches of the other indexes (the args GIN) instead of walking the table.
 */
function newestFirst(d: SqlDialect, f: NormalizedFilter, columns: Sql, where: Sql[], limit: number, hint: Sql, orderBy = 'id'): Sql {
  const parts = branches(d, f);
  const order = sql.raw(`ORDER BY ${orderBy} DESC`);
  if (parts.length === 1) return sql`SELECT ${columns} FROM jobs${hint} ${and([...where, ...parts[0]])} ${order} LIMIT ${limit}`;
  const [a, b] = parts.map((extra) => sql`(SELECT ${columns} FROM jobs ${and([...where, ...extra])} ${order} LIMIT ${limit})`);
  return sql`SELECT * FROM (${a} UNION ALL ${b}) j ORDER BY id DESC LIMIT ${limit}`;
}

/**
 * PostgreSQL estimates every `@>` at 1% of the table, whatever the value, so for argsContains it
 * walked the primary key newest first and filtered: fine for a value many jobs share, but a
 * full walk of the table for a rare one (an order id: 1.9 s at 1,000,000 rows). A find with
 * argsContains therefore first probes the newest rows the other conditions pick, counting
 * matches; where they are dense the page is read within the probed range, where they are sparse
 * through the GIN index (`sparse`), whose cost follows the number of matches, not the table.
 */
export function argsProbeSize(limit: number): number {
  return Math.max(1_000, (limit + 1) * 20);
}

export function usesArgsProbe(d: SqlDialect, f: NormalizedFilter): boolean {
  return d.name === 'postgres' && f.argsContains !== undefined && !needsWindow(d, f);
}

/** `n` rows probed (newest first below `beforeId`), `hits` among them matching args, lowest id `lo`. */
export function argsProbeStatement(d: SqlDialect, f: NormalizedFilter, beforeId: number | null, size: number): Sql {
  const where = indexedConditions(d, { ...f, argsContains: undefined }, '');
  if (beforeId !== null) where.push(sql`id < ${beforeId}`);
  const contains = sql`(args::jsonb) @> ${JSON.stringify(f.argsContains)}::jsonb`;
  return sql`SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE ${contains}) AS hits, MIN(id) AS lo FROM (${newestFirst(d, f, sql`id, args`, where, size, sql``)}) w`;
}

/** The window of newest rows (below `beforeId`) that the indexed conditions pick. */
function windowStatement(d: SqlDialect, f: NormalizedFilter, beforeId: number | null, columns: Sql = sql`id`): Sql {
  const where = indexedConditions(d, f, '');
  if (beforeId !== null) where.push(sql`id < ${beforeId}`);
  return newestFirst(d, f, columns, where, SCAN_WINDOW, indexHint(d, f));
}

/**
 * SQLite runs a statement on the event loop, and its JSON functions parse each row's args
 * whole: one page over a window of 10,000 rows of 100 KB args held the loop for 2.4–6.5 s, and
 * the worker's handlers, heartbeats and requests with it. There a window is read in slices of
 * about this many bytes of the scanned columns, with a turn of the event loop between them.
 */
export const SQLITE_SCAN_SLICE_BYTES = 4 * 1024 * 1024;

/**
 * SQLite: the window's slices, newest first, each `lo`, `hi` and `n` rows: consecutive rows
 * whose scanned bytes (args for argsContains, the error for errorContains) come to at most
 * SQLITE_SCAN_SLICE_BYTES plus their last row. `octet_length` reads a value's length from the
 * record header, not the value (6 ms for 10,000 rows of 100 KB).
 */
export function windowSlicesStatement(d: SqlDialect, f: NormalizedFilter, beforeId: number | null): Sql {
  const scanned = [
    ...(f.argsContains !== undefined ? [sql`COALESCE(octet_length(args), 0)`] : []),
    ...(f.errorContains !== undefined ? [sql`COALESCE(octet_length(last_error), 0)`] : []),
  ];
  const bytes = scanned.length ? sql.join(scanned, ' + ') : sql`0`;
  return sql`SELECT MIN(id) AS lo, MAX(id) AS hi, COUNT(*) AS n FROM (
      SELECT id, CAST((SUM(b) OVER (ORDER BY id DESC ROWS UNBOUNDED PRECEDING) - b) / ${SQLITE_SCAN_SLICE_BYTES} AS INTEGER) AS slice
      FROM (${windowStatement(d, f, beforeId, sql`id, ${bytes} AS b`)}) w) s
    GROUP BY slice ORDER BY slice`;
}

/**
 * Where a page looks: below an id (indexed filters; `sparse`: through the args GIN index, see
 * argsProbeStatement), or within an id range (a window of scanned filters, or a dense probe).
 */
export type PageRange = { beforeId: number | null; sparse?: boolean } | { lo: number; hi: number };

/**
 * How far the window of the next `SCAN_WINDOW` candidate rows reaches: its lowest and highest
 * id and its size (a full window means more rows below). The page is then read within that
 * id range, so the two statements agree on the window even while rows are inserted.
 */
export function windowExtentStatement(d: SqlDialect, f: NormalizedFilter, beforeId: number | null): Sql {
  return sql`SELECT MIN(w.id) AS lo, MAX(w.id) AS hi, COUNT(*) AS n FROM (${windowStatement(d, f, beforeId)}) w`;
}

/** A page of the given columns: the statement behind `findPageStatement`, for callers that need less of each row. */
export function findColumnsStatement(d: SqlDialect, f: NormalizedFilter, range: PageRange, limit: number, columns: Sql): Sql {
  const where = indexedConditions(d, f, '');
  // Within a window's id range the primary key finds the rows; no branches needed.
  if ('lo' in range) {
    where.push(sql`id >= ${range.lo} AND id <= ${range.hi}`, ...scannedConditions(d, f, ''));
    return sql`SELECT ${columns} FROM jobs ${and(where)} ORDER BY id DESC LIMIT ${limit + 1}`;
  }
  if (range.beforeId !== null) where.push(sql`id < ${range.beforeId}`);
  return newestFirst(d, f, columns, where, limit + 1, indexHint(d, f), range.sparse ? 'id + 0' : 'id');
}

/** The select list of retryMany/cancelMany's pages: ids, without reading whole rows. */
export const ID_COLUMN: Sql = sql`id`;

/** A page, newest first: `limit + 1` rows, the extra one telling whether more follow. */
export function findPageStatement(d: SqlDialect, f: NormalizedFilter, range: PageRange, limit: number): Sql {
  return findColumnsStatement(d, f, range, limit, jobColumns(d));
}

import type { SqlDialect } from '../database/dialects';
import { chunked, sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { pausedGroupsFilter } from './lease-assignments';

/**
 * Types one statement probes at most on MySQL and SQLite (one UNION arm each; SQLite allows 500
 * arms in a compound SELECT). A worker with more handlers runs one statement per slice and keeps
 * the best rows of all (selectClaimCandidates). PostgreSQL binds the types as one array.
 */
export const TYPES_PER_PROBE = 50;

export interface ReadyProbe {
  /** The select list (it must contain `priority`, `run_after` and `id`, which order the result). */
  columns: Sql;
  /** Only this group (a group's quota); omitted = any group. */
  group?: string;
  /** Paused groups to step over. */
  excludeGroups?: readonly string[];
  /** Lock the rows read (`FOR UPDATE SKIP LOCKED`; nothing on SQLite, whose write lock is the claim's). */
  lock: boolean;
  /**
   * MySQL: each type's first ready row in claim order, read just before without locks
   * (readyFloorsStatement). Each type's stretch is read from there; a type without a floor had no
   * ready row and is not read at all.
   */
  floors?: ReadonlyMap<string, ReadyFloor>;
  /**
   * SQLite: the levels of each type to read (sqliteLevels), as dueLevelsStatement found them due
   * or the claim of one type walks them; a type not listed is read in one pass (sqliteOnePass).
   */
  levels?: SqliteLevels;
}

/** SQLite: a type's top priority, or the priorities below it (sqliteLevels). */
export type SqliteLevel = 'top' | 'below';

/** SQLite: the levels to read of one type, and its top priority where dueLevelsStatement found it. */
export interface SqliteTypeLevels {
  read: readonly SqliteLevel[];
  top?: number;
}

/** SQLite: the levels to read, by type. */
export type SqliteLevels = ReadonlyMap<string, SqliteTypeLevels>;

/** Where a type's ready rows began a moment ago, in the MySQL ready index's order. */
export interface ReadyFloor {
  negPriority: number;
  /** `run_after` as MySQL's text (`YYYY-MM-DD HH:MM:SS.mmm`), so it is compared as stored. */
  runAfter: string;
  id: number;
}

/**
 * Claim order, as an ORDER BY: the highest priority first, then the job due first, then the
 * oldest id (MySQL's ready indexes hold the priority negated, ascending). The ready indexes are in
 * this order, so jobs due later sit after the due jobs of their priority and a claim reads due
 * rows first (see the migrations named ReadyDueOrder).
 */
export function readyOrder(d: SqlDialect, alias = ''): Sql {
  const order = d.name === 'mysql' ? `${alias}neg_priority, ${alias}run_after, ${alias}id` : `${alias}priority DESC, ${alias}run_after, ${alias}id`;
  return sql`${sql.raw(order)}`;
}

/**
 * The best `limit` ready rows among `types`, of any group or of one, by priority (highest first),
 * then due time, then id.
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
    if (types.length === 1) return pgDueRows(probe.columns, sql`${types[0]}`, where, limit, lock);
    // One LATERAL probe per type; `type = q.type` is an index condition of the ready index, whose
    // order (type, priority DESC, run_after, id) then serves the probe's ORDER BY without a sort.
    return sql`SELECT p.* FROM unnest(${[...types]}::text[]) AS q (type)
      CROSS JOIN LATERAL (${pgDueRows(probe.columns, sql`q.type`, where, limit, lock)}) p
      ORDER BY ${readyOrder(d, 'p.')} LIMIT ${limit}`;
  }
  const floors = d.name === 'mysql' ? probe.floors : undefined;
  const read = floors ? types.filter((t) => floors.has(t)) : types;
  if (!read.length) throw new Error('readyByTypeStatement needs a floor for at least one type');
  const arms =
    d.name === 'mysql'
      ? read.flatMap((t) => mysqlLevels(d, index, probe.columns, sql`${t}`, where, limit, lock, floors?.get(t)))
      : read.flatMap((t) => {
          const levels = probe.levels?.get(t);
          if (!levels) return [sqliteOnePass(d, index, probe.columns, sql`${t}`, where, limit)];
          const [top, below] = sqliteLevels(d, index, probe.columns, sql`${t}`, where, probe.group === undefined ? sql`` : where, limit, levels.top);
          return [...(levels.read.includes('top') ? [top] : []), ...(levels.read.includes('below') ? [below] : [])];
        });
  if (arms.length === 1) return arms[0];
  // Each arm keeps its own ORDER BY and LIMIT: parenthesized on MySQL, a subquery on SQLite.
  const wrapped = arms.map((a) => (d.name === 'mysql' ? sql`(${a})` : sql`SELECT * FROM (${a})`));
  return sql`${sql.join(wrapped, ' UNION ALL ')} ORDER BY priority DESC, run_after, id LIMIT ${d.name === 'sqlite' ? sqliteLimit(limit) : limit}`;
}

/**
 * MySQL: where each type's ready rows begin (of the probe's group, past its paused groups), read
 * without locks: its first ready row in claim order, due or not, as a row (type, neg_priority,
 * run_after_text, id, due). The locking read that follows starts from the first due row
 * (ReadyProbe.floors) rather than from the front of the type's stretch. Within a priority the
 * rows are in due order, so a head that is not due says none of its priority is: at priority 0
 * none is due at all, above 0 floorHeadsBelowStatement looks at the next priority's head.
 *
 * Why floors: claiming a row moves its ready-index entry out of the ready stretch, and InnoDB
 * leaves the old entry in place, delete-marked, until purge removes it. A locking read walks those
 * entries and checks each one for a lock through the clustered index; a consistent read steps
 * over them. Purge lags behind a busy queue, and stops while any transaction holds an older
 * snapshot (a `mysqldump --single-transaction`, a long report): the locking walk then grew with
 * every job claimed since (60,000 no-op jobs: 2,650 jobs/s, and 372 with a snapshot held open).
 * Rows that become ready before the floor between the two reads wait for the next claim, as if
 * they had come just after this one.
 *
 * Why heads: a search for the first due row steps over every job due later before it when none is
 * due. Beside 100,000 jobs due tomorrow, an idle claim's floors took 14–26 ms with them at
 * priorities 0–4 (read above 0 in one pass) and 37 ms for a worker of 4 types or more with them
 * all at 0 (MariaDB reads a correlated probe by `ref` on the type, with no range on the rest). A
 * head is one index entry.
 */
export function readyFloorsStatement(d: SqlDialect, types: readonly string[], probe: Pick<ReadyProbe, 'group' | 'excludeGroups'>): Sql {
  if (d.name !== 'mysql') throw new Error(`readyFloorsStatement is for MySQL, not ${d.name}`);
  if (!types.length || types.length > TYPES_PER_CHECK) throw new Error(`readyFloorsStatement takes 1 to ${TYPES_PER_CHECK} types, got ${types.length}`);
  const { where, index } = floorScope(d, probe);
  if (types.length >= CHECK_TYPES_FROM) return correlatedFloors(d, index, types, where);
  return sql.join(types.map((t) => sql`(${floorArm(d, index, sql`${t}`, where, sql``, false)})`), ' UNION ALL ');
}

/**
 * MySQL: for each type whose head was not due at a priority above 0, the next head below that
 * priority (rows as readyFloorsStatement's), one index entry each: the priority is a literal here,
 * so a range bound (MariaDB bounds none by a subquery's value). `onePass`: the first due row below
 * it instead, in one pass, for a type with more priorities than HEADS_ONE_BY_ONE.
 */
export function floorHeadsBelowStatement(d: SqlDialect, heads: ReadonlyMap<string, number>, probe: Pick<ReadyProbe, 'group' | 'excludeGroups'>, onePass: boolean): Sql {
  if (d.name !== 'mysql') throw new Error(`floorHeadsBelowStatement is for MySQL, not ${d.name}`);
  if (!heads.size || heads.size > TYPES_PER_PROBE) throw new Error(`floorHeadsBelowStatement takes 1 to ${TYPES_PER_PROBE} types, got ${heads.size}`);
  const { where, index } = floorScope(d, probe);
  const arms = [...heads].map(([t, np]) => floorArm(d, index, sql`${t}`, where, sql` AND neg_priority > ${sql.raw(String(Math.trunc(np)))}`, onePass));
  return sql.join(arms.map((a) => sql`(${a})`), ' UNION ALL ');
}

function floorScope(d: SqlDialect, probe: Pick<ReadyProbe, 'group' | 'excludeGroups'>): { where: Sql; index: string } {
  return probe.group === undefined
    ? { where: pausedGroupsFilter(d, probe.excludeGroups), index: 'jobs_ready_idx' }
    : { where: sql` AND group_key = ${probe.group}`, index: 'jobs_ready_group_idx' };
}

/** One type's first ready row in `range`: due only, or with whether it is due. */
function floorArm(d: SqlDialect, index: string, type: Sql, where: Sql, range: Sql, dueOnly: boolean): Sql {
  const due = dueOnly ? sql`1 AS due` : sql`run_after <= ${d.now()} AS due`;
  const dueFilter = dueOnly ? sql` AND run_after <= ${d.now()}` : sql``;
  return sql`SELECT ${FLOOR_COLUMNS}, ${due} FROM jobs FORCE INDEX (${sql.raw(index)})
    WHERE state = 'ready' AND type = ${type}${dueFilter}${where}${range} ORDER BY ${readyOrder(d)} LIMIT 1`;
}

/**
 * From this many types, MySQL's floors are read as correlated probes of the types (one index dive
 * each, in one statement) rather than one UNION arm per type: a worker that handles many types
 * usually has work of a few. (SQLite: SQLITE_CHECK_TYPES_FROM.)
 */
export const CHECK_TYPES_FROM = 4;

/**
 * MySQL floors of many types in one statement: per type (a derived table of literals, which take
 * the column's collation, so the index serves them) one correlated probe of its head, packed into
 * one text value (one index dive, not one per column); floorRowsOf unpacks it. 50 types took
 * 0.6 ms against 1.4–1.9 ms as 50 UNION arms, and a worker with 1,000 handlers needs one
 * statement, not 20.
 */
function correlatedFloors(d: SqlDialect, index: string, types: readonly string[], where: Sql): Sql {
  const head = sql`(SELECT CONCAT(neg_priority, ' ', id, ' ', run_after <= ${d.now()}, ' ', ${sql.raw(FLOOR_RUN_AFTER)})
      FROM jobs FORCE INDEX (${sql.raw(index)}) WHERE state = 'ready' AND type = t.type${where} ORDER BY ${readyOrder(d)} LIMIT 1)`;
  const listed = sql.join(types.map((t) => sql`SELECT ${t} AS type`), ' UNION ALL ');
  return sql`SELECT f.type, f.head FROM (SELECT t.type, ${head} AS head FROM (${listed}) t) f WHERE f.head IS NOT NULL`;
}

/**
 * A floor's `run_after` as text, which mysql2 hands back as it is (a DATETIME it would turn into a
 * local Date). Under another name: MySQL resolves ORDER BY to a select-list alias first, and an
 * ORDER BY of the text would sort the type's ready rows instead of reading the index in order.
 */
const FLOOR_RUN_AFTER = `CAST(run_after AS CHAR)`;
const FLOOR_COLUMNS = sql`${sql.raw(`type, neg_priority, ${FLOOR_RUN_AFTER} AS run_after_text, id`)}`;

/** Types one readyTypesStatement checks at most (they travel as one JSON array on SQLite). */
export const TYPES_PER_CHECK = 1_000;

/**
 * SQLite: which of `types` have ready rows at all (due or not), one index probe per type, no sort:
 * the types travel as one JSON array, so one statement text whatever their number. The first of a
 * many-type claim's two checks; dueLevelsStatement then looks at the few it returns.
 *
 * Why: a worker that handles many job types usually has work of a few. readyByTypeStatement reads
 * compound-SELECT arms per type, and SQLite prepares and runs each arm as a co-routine with a
 * sort for the merge, about 60 µs per type and claim whether the type has rows or not: a worker
 * with 100 handlers claimed 17 times slower than with one (bench/HISTORY.md, many-types). The
 * claim reads the arms of the due levels found, usually one per type with work.
 */
export function readyTypesStatement(d: SqlDialect, types: readonly string[]): Sql {
  if (d.name !== 'sqlite') throw new Error(`readyTypesStatement is for SQLite, not ${d.name}`);
  if (!types.length || types.length > TYPES_PER_CHECK) throw new Error(`readyTypesStatement takes 1 to ${TYPES_PER_CHECK} types, got ${types.length}`);
  return sql`SELECT j.value AS type FROM json_each(${JSON.stringify(types)}) j
    WHERE EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_ready_idx WHERE state = 'ready' AND type = j.value)`;
}

/**
 * SQLite: of types that have ready rows, their levels: each type's top priority (`top`) and
 * whether rows are due at it (`top_due`), the next priority below it (`next`, the head's: one
 * index entry) and whether rows are due there (`next_due`), each a probe that is one entry or a
 * range ending at the first job due later. toSqliteLevels decides from these, and levelsBelow
 * looks further down for the few types whose next priority has nothing due.
 * A check of "a due row below the top" in one pass stepped over every job of the lower
 * priorities due later (3.4 ms per claim of a 6-type worker beside 100,000 due tomorrow over
 * priorities 0–4, even when the top was busy). Run on readyTypesStatement's few types: on all of
 * a thousand, its probes per type cost a busy worker a sixth of its throughput.
 */
export function dueLevelsStatement(d: SqlDialect, types: readonly string[]): Sql {
  if (d.name !== 'sqlite') throw new Error(`dueLevelsStatement is for SQLite, not ${d.name}`);
  if (!types.length || types.length > TYPES_PER_CHECK) throw new Error(`dueLevelsStatement takes 1 to ${TYPES_PER_CHECK} types, got ${types.length}`);
  const dueAt = (level: string) => sql`EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_ready_idx
    WHERE state = 'ready' AND type = t.type AND priority = ${sql.raw(level)} AND run_after <= ${d.now()})`;
  // Materialized: flattened, each mention of `top` and `next` ran its probe again.
  return sql`WITH h AS MATERIALIZED (SELECT j.value AS type, (SELECT priority FROM jobs INDEXED BY jobs_ready_idx
        WHERE state = 'ready' AND type = j.value ORDER BY priority DESC LIMIT 1) AS top FROM json_each(${JSON.stringify(types)}) j),
      t AS MATERIALIZED (SELECT h.type, h.top, (SELECT priority FROM jobs INDEXED BY jobs_ready_idx
        WHERE state = 'ready' AND type = h.type AND priority < h.top ORDER BY priority DESC LIMIT 1) AS next FROM h WHERE h.top IS NOT NULL)
    SELECT t.type, t.top, ${dueAt('t.top')} AS top_due, t.next, t.next IS NOT NULL AND ${dueAt('t.next')} AS next_due FROM t`;
}

/**
 * dueLevelsStatement's rows: the levels to read of each type with due rows (its top, and below it
 * when some are due there), its top priority; and `unsure`, the types whose next priority below
 * the top has nothing due, with that priority: whether any lower one has is for levelsBelow to say.
 */
export function toSqliteLevels(rows: readonly Row[]): { levels: Map<string, SqliteTypeLevels>; unsure: Map<string, { top: number; topDue: boolean; from: number }> } {
  const levels = new Map<string, SqliteTypeLevels>();
  const unsure = new Map<string, { top: number; topDue: boolean; from: number }>();
  for (const r of rows) {
    const type = String(r.type);
    const top = Number(r.top);
    const topDue = Number(r.top_due) === 1;
    if (r.next != null && Number(r.next_due) !== 1) unsure.set(type, { top, topDue, from: Number(r.next) });
    else if (topDue || Number(r.next_due) === 1) levels.set(type, { read: Number(r.next_due) === 1 ? ['top', 'below'] : ['top'], top });
  }
  return { levels, unsure };
}

/**
 * SQLite: the levels of a type to read below priority `from` (whose head is not due, nor any
 * above it): from its first priority with a due job (sqliteDueHead from `from`). Undefined when
 * nothing below `from` is due.
 */
export async function levelsBelow(tx: SqlExecutor, type: string, from: number): Promise<SqliteTypeLevels | undefined> {
  const head = await sqliteDueHead(tx, sql`priority`, type, undefined, from);
  return head && { read: ['top', 'below'], top: Number(head.priority) };
}

/** The floors of readyFloorsStatement's rows, by type: each type's first due row in claim order. */
export function toReadyFloors(rows: readonly Row[]): Map<string, ReadyFloor> {
  return readFloorRows(rows).floors;
}

/**
 * readyFloorsStatement's or floorHeadsBelowStatement's rows: each type's first due row (`floors`),
 * and the priority (negated) of each type's head above 0 that is not due (`delayed`), below which
 * floorHeadsBelowStatement looks next. A head at 0 that is not due: nothing of the type is due.
 */
export function readFloorRows(rows: readonly Row[]): { floors: Map<string, ReadyFloor>; delayed: Map<string, number> } {
  const floors = new Map<string, ReadyFloor>();
  const delayed = new Map<string, number>();
  for (const { type, floor, due } of floorRowsOf(rows)) {
    if (due) addFloor(floors, type, floor);
    else if (floor.negPriority < 0) delayed.set(type, floor.negPriority);
  }
  return { floors, delayed };
}

/** Keeps the earlier of a type's floors in claim order. */
export function addFloor(floors: Map<string, ReadyFloor>, type: string, floor: ReadyFloor): void {
  const seen = floors.get(type);
  if (!seen || compareFloors(floor, seen) < 0) floors.set(type, floor);
}

/** Rows of either form (one per arm, or correlatedFloors' packed head per type) as one list. */
function floorRowsOf(rows: readonly Row[]): Array<{ type: string; floor: ReadyFloor; due: boolean }> {
  const out: Array<{ type: string; floor: ReadyFloor; due: boolean }> = [];
  for (const r of rows) {
    const type = String(r.type);
    if (!('head' in r)) {
      out.push({ type, floor: { negPriority: Number(r.neg_priority), runAfter: String(r.run_after_text), id: Number(r.id) }, due: Number(r.due) === 1 });
      continue;
    }
    if (r.head == null) continue;
    // "neg_priority id due run_after": run_after's text has a space of its own.
    const [np, id, due, ...at] = String(r.head).split(' ');
    out.push({ type, floor: { negPriority: Number(np), runAfter: at.join(' '), id: Number(id) }, due: due === '1' });
  }
  return out;
}

function compareFloors(a: ReadyFloor, b: ReadyFloor): number {
  return a.negPriority - b.negPriority || (a.runAfter < b.runAfter ? -1 : a.runAfter > b.runAfter ? 1 : 0) || a.id - b.id;
}

/**
 * MySQL: one type's due rows in claim order as two reads (UNION arms), split at priority 0 (the
 * default, which most jobs have): those of priority 0, an index range that ends at the first job
 * due later, and those of higher priorities, one pass that still passes their later entries.
 * One pass over all of them read every later entry of the type whenever fewer rows were due than
 * the limit (an idle poll, a trickle): 18 ms per claim on MariaDB beside 100,000 jobs due
 * tomorrow. MariaDB bounds a range by a priority only when it is a literal: a subquery's value
 * (the type's top priority) left it a filter. With a floor, the reads start there.
 */
function mysqlLevels(d: SqlDialect, index: string, columns: Sql, type: Sql, where: Sql, limit: number, lock: Sql, floor?: ReadyFloor): Sql[] {
  const read = (part: Sql) => sql`SELECT ${columns} FROM jobs FORCE INDEX (${sql.raw(index)})
    WHERE state = 'ready' AND type = ${type} AND run_after <= ${d.now()}${where}${part}
    ORDER BY ${readyOrder(d)} LIMIT ${limit}${lock}`;
  if (!floor) return [read(sql` AND neg_priority < 0`), read(sql` AND neg_priority = 0`)];
  const { negPriority: np, runAfter: at, id } = floor;
  const fromAt = sql`(run_after > ${at} OR (run_after = ${at} AND id >= ${id}))`;
  if (np === 0) return [read(sql` AND neg_priority = 0 AND ${fromAt}`)];
  return [read(sql` AND neg_priority < 0 AND (neg_priority > ${np} OR (neg_priority = ${np} AND ${fromAt}))`), read(sql` AND neg_priority = 0`)];
}

/**
 * SQLite: a type's first ready row in claim order (of a group, if given) among the priorities
 * below `below` (all without it), and whether it is due (`due`): one index entry read. Within a
 * priority the rows are in due order, so a head that is not due says no row of its priority is,
 * and the next head to look at is the one below its priority (sqliteDueHead, and the SQLite claim
 * of one type below its top).
 */
export function sqliteHeadStatement(d: SqlDialect, columns: Sql, type: string, group: string | undefined, below?: number): Sql {
  if (d.name !== 'sqlite') throw new Error(`sqliteHeadStatement is for SQLite, not ${d.name}`);
  const index = group === undefined ? 'jobs_ready_idx' : 'jobs_ready_group_idx';
  const inGroup = group === undefined ? sql`` : sql` AND group_key = ${group}`;
  const under = below === undefined ? sql`` : sql` AND priority < ${below}`;
  return sql`SELECT ${columns}, run_after <= ${d.now()} AS due FROM jobs INDEXED BY ${sql.raw(index)}
    WHERE state = 'ready' AND type = ${type}${inGroup}${under} ORDER BY ${readyOrder(d)} LIMIT 1`;
}

/** Priorities a read looks at head by head before the rest in one pass (a type with hundreds of them): SQLite's, and MySQL's floors. */
export const HEADS_ONE_BY_ONE = 8;

/**
 * SQLite: a type's next job due now (of a group, if given), head by head: the rotation's and the
 * group look's read of a group's next job. A busy type's first head is due: one entry read, as
 * the one pass read it. One pass over a type whose jobs are all due later (an idle worker's poll
 * beside a schedule of reminders) stepped over every one of them, 11–15 ms at 100,000. `columns`
 * must name `priority`. `from`: only below this priority (the ones above are known not due).
 */
export async function sqliteDueHead(tx: SqlExecutor, columns: Sql, type: string, group: string | undefined, from?: number): Promise<Row | undefined> {
  let below = from;
  for (let level = 0; level < HEADS_ONE_BY_ONE; level++) {
    const [head] = (await tx.run(sqliteHeadStatement(tx.dialect, columns, type, group, below))).rows;
    if (!head || Number(head.due)) return head;
    below = Number(head.priority);
  }
  const levels = new Map([[type, { read: ['below'] as const, top: below }]]);
  return (await tx.run(readyByTypeStatement(tx.dialect, [type], 1, { columns, group, lock: false, levels }))).rows[0];
}

/** Slices of `types` small enough for one readyByTypeStatement on this dialect. */
export function typeSlices(d: SqlDialect, types: readonly string[]): string[][] {
  return d.name === 'postgres' ? [[...types]] : chunked(types, TYPES_PER_PROBE);
}

/**
 * SQLite: one type's due rows in claim order in one pass, where no levels are given: the rotation's
 * reads of a group's next job (limit 1, one statement per group and claim, where two levels as a
 * compound SELECT took a 100-group worker from 3,200–5,400 to 2,000–2,800 jobs/s) and claims of
 * more types than one statement probes. A read that finds fewer due rows than its limit passes
 * the type's later entries on the index entry.
 */
function sqliteOnePass(d: SqlDialect, index: string, columns: Sql, type: Sql, where: Sql, limit: number): Sql {
  return sql`SELECT ${columns} FROM jobs INDEXED BY ${sql.raw(index)}
    WHERE state = 'ready' AND type = ${type} AND run_after <= ${d.now()}${where}
    ORDER BY ${readyOrder(d)} LIMIT ${sqliteLimit(limit)}`;
}

/**
 * SQLite re-prepares a statement whose `LIMIT ?` is bound anew (its planner may use the value),
 * every execution: about 5 µs, a quarter of a chain link's claim read. Small limits (a chain's
 * next link, a worker at its defaults) are written into the text, a statement text per value;
 * larger ones, whose claims take far longer than that, stay bound.
 */
function sqliteLimit(limit: number): number | ReturnType<typeof sql.raw> {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`a claim's limit must be a non-negative integer, got ${limit}`);
  return limit <= LITERAL_LIMITS_UP_TO ? sql.raw(String(limit)) : limit;
}

const LITERAL_LIMITS_UP_TO = 32;

/**
 * SQLite: one type's due rows in claim order as two reads (compound-SELECT arms): those of the
 * type's top priority, an index range that ends at the first job due later, and those of lower
 * priorities, one pass that still passes their later entries. The top priority is a scalar
 * subquery, one dive into the ready index that SQLite runs once and uses as a bound of the range.
 * One pass over all priorities read every later entry of the type whenever fewer rows were due
 * than the limit (an idle poll, a trickle): 7.6 ms per claim, under the write lock, beside 100,000
 * jobs due tomorrow. A recursive skip scan over every priority (as pgDueRows) cost a worker of many
 * types more on every claim. `topWhere` narrows the dive (a group's quota); paused groups are left
 * out of it, since a top that is too high only moves rows from the first read to the second. A top
 * the types check already read (`known`, of any group: as high or higher) replaces the dive.
 * The hint pins the ready index: the planner also likes find()'s (type, id) index for `type = ?`,
 * and with it would sort every ready row of the type.
 */
function sqliteLevels(d: SqlDialect, index: string, columns: Sql, type: Sql, where: Sql, topWhere: Sql, limit: number, known?: number): [Sql, Sql] {
  const top =
    known === undefined
      ? sql`(SELECT priority FROM jobs INDEXED BY ${sql.raw(index)} WHERE state = 'ready' AND type = ${type}${topWhere} ORDER BY priority DESC LIMIT 1)`
      : sql`${known}`;
  const read = (level: Sql) => sql`SELECT ${columns} FROM jobs INDEXED BY ${sql.raw(index)}
    WHERE state = 'ready' AND type = ${type} AND priority ${level} AND run_after <= ${d.now()}${where}
    ORDER BY ${readyOrder(d)} LIMIT ${sqliteLimit(limit)}`;
  return [read(sql`= ${top}`), read(sql`< ${top}`)];
}

/**
 * PostgreSQL: one type's due rows in claim order, priority by priority (as the claim function
 * reads them, migration 32): the priorities present among the type's ready rows by a skip scan of
 * the ready index, one probe each and only while rows are still wanted, and within each priority
 * the due rows, an index range that ends at the first job due later. One pass over (priority,
 * run_after, id) read every later entry of the type whenever fewer rows were due than the limit.
 * `where` (a group, paused groups) narrows both; `type` may name an outer column.
 */
export function pgDueRows(columns: Sql, type: Sql, where: Sql, limit: number | Sql, lock: Sql): Sql {
  const level = (below: Sql) => sql`SELECT priority FROM jobs WHERE state = 'ready' AND type = ${type}${where}${below} ORDER BY priority DESC LIMIT 1`;
  return sql`WITH RECURSIVE lv (priority) AS (
      (${level(sql``)})
      UNION ALL
      SELECT (${level(sql` AND priority < lv.priority`)}) FROM lv WHERE lv.priority IS NOT NULL
    )
    SELECT x.* FROM lv CROSS JOIN LATERAL (
      SELECT ${columns} FROM jobs
      WHERE state = 'ready' AND type = ${type} AND priority = lv.priority AND run_after <= now()${where}
      ORDER BY priority DESC, run_after, id LIMIT ${limit}${lock}
    ) x LIMIT ${limit}`;
}

import { databaseNow } from '../database/database-now.sql';
import { valueBytes } from '../database/stored-bytes';
import { chunked, sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { takeBatch } from '../finalize/take-batch';
import type { ScheduleDefinition } from './schedule-definition';
import { lastRunIn } from './last-slot-key.sql';
import type { NormalizedScheduleFilter } from './schedule-filter';

/** A schedule row as stored, with its bookkeeping. */
export interface StoredSchedule extends ScheduleDefinition {
  /** The earliest slot not yet enqueued. */
  nextRunAt: Date;
  /** The latest slot enqueued, null before the first. */
  lastSlot: Date | null;
  /** Database time of the tick that enqueued `lastSlot`. */
  lastEnqueuedAt: Date | null;
  /** An `@Recurring` schedule fires until then unless a process declaring it renews it; null: made by `schedule()`. */
  declaredUntil: Date | null;
  /**
   * When its declaration began (at insert, or when a lapsed one was declared again); null for
   * `schedule()`. Slots due while it was dormant count as missed, like slots due in downtime.
   */
  declaredSince: Date | null;
}

function columns(tx: SqlExecutor): Sql {
  const t = (c: string) => tx.dialect.selectTime(c);
  return sql`name, cron, time_zone, job_type, args, backfill, misfire_grace_ms, job_options,
    ${t('next_run_at')} AS next_run_at, ${t('last_slot')} AS last_slot, ${t('last_enqueued_at')} AS last_enqueued_at,
    ${t('declared_until')} AS declared_until, ${t('declared_since')} AS declared_since`;
}

/**
 * A schedule fires while it is declared: made by `schedule()` (no declaration to lapse), or an
 * `@Recurring` one that a running process has declared recently enough.
 */
function declared(now: Sql): Sql {
  return sql`(declared_until IS NULL OR declared_until > ${now})`;
}

/** The value `declared_until` gets: a lease of `ttlMs` from the database's now, or null for a runtime schedule. */
function declaration(tx: SqlExecutor, ttlMs: number | null): Sql {
  return ttlMs === null ? sql`NULL` : tx.dialect.addMs(tx.dialect.now(), ttlMs);
}

/**
 * `declared_since` and `declared_until` for a row declared now: a declaration that held goes on
 * (its start stays); one that had lapsed, or a `schedule()` row, starts now. `declared_since` is
 * assigned first: MySQL evaluates SET left to right with the values already assigned.
 */
function redeclare(tx: SqlExecutor, ttlMs: number | null): Sql {
  if (ttlMs === null) return sql`declared_since = NULL, declared_until = NULL`;
  const now = tx.dialect.now();
  return sql`declared_since = CASE WHEN declared_until IS NULL OR declared_until <= ${now} THEN ${now} ELSE declared_since END,
    declared_until = ${declaration(tx, ttlMs)}`;
}

export function toSchedule(row: Row, tx: SqlExecutor): StoredSchedule {
  const backfill = String(row.backfill);
  return {
    name: String(row.name),
    cron: String(row.cron),
    timeZone: String(row.time_zone),
    type: String(row.job_type),
    args: JSON.parse(String(row.args)) as Record<string, unknown>,
    backfill: backfill === 'none' || backfill === 'last' ? backfill : Number(backfill),
    misfireGraceMs: Number(row.misfire_grace_ms),
    job: JSON.parse(String(row.job_options)) as ScheduleDefinition['job'],
    nextRunAt: tx.dialect.parseTime(row.next_run_at)!,
    lastSlot: tx.dialect.parseTime(row.last_slot),
    lastEnqueuedAt: tx.dialect.parseTime(row.last_enqueued_at),
    declaredUntil: tx.dialect.parseTime(row.declared_until),
    declaredSince: tx.dialect.parseTime(row.declared_since),
  };
}

export async function findSchedule(tx: SqlExecutor, name: string): Promise<StoredSchedule | null> {
  const { rows } = await tx.run(sql`SELECT ${columns(tx)} FROM job_queue_schedules WHERE name = ${name}`);
  return rows.length ? toSchedule(rows[0], tx) : null;
}

/** Characters a schedule's whole read weighs: bytes of its args and job options (see valueBytes). */
export function scheduleChars(tx: SqlExecutor): Sql {
  return sql`${valueBytes(tx.dialect, 'args')} + ${valueBytes(tx.dialect, 'job_options')}`;
}

/** A schedule's name and what its whole read weighs (see scheduleChars). */
export interface ScheduleSize {
  name: string;
  chars: number;
}

/** Names and sizes of the first `n` schedules after `afterName` that match `filter`, by name. */
export async function scheduleSizesAfter(tx: SqlExecutor, filter: NormalizedScheduleFilter, afterName: string | null, n: number): Promise<ScheduleSize[]> {
  const { rows } = await tx.run(sql`SELECT name, ${scheduleChars(tx)} AS chars FROM job_queue_schedules
    ${scheduleWhere(tx, filter, afterName === null ? [] : [sql`name > ${afterName}`])} ORDER BY name LIMIT ${n}`);
  return rows.map((r) => ({ name: String(r.name), chars: Number(r.chars) }));
}

/** Whole schedules from `first` to `last` (by name) that match `filter`: a range of the primary key. */
export async function schedulesBetween(tx: SqlExecutor, filter: NormalizedScheduleFilter, first: string, last: string): Promise<StoredSchedule[]> {
  const { rows } = await tx.run(sql`SELECT ${columns(tx)} FROM job_queue_schedules
    ${scheduleWhere(tx, filter, [sql`name >= ${first}`, sql`name <= ${last}`])} ORDER BY name`);
  return rows.map((r) => toSchedule(r, tx));
}

/** Whole schedules by name, in `names`' order; one deleted since it was named is left out. */
export async function schedulesByName(tx: SqlExecutor, names: readonly string[]): Promise<StoredSchedule[]> {
  const byName = new Map<string, StoredSchedule>();
  for (const chunk of chunked(names)) {
    const read = await tx.run(sql`SELECT ${columns(tx)} FROM job_queue_schedules WHERE name IN (${sql.list(chunk)})`);
    for (const r of read.rows) byName.set(String(r.name), toSchedule(r, tx));
  }
  return names.flatMap((n) => byName.get(n) ?? []);
}

/**
 * A page by name: up to `limit + 1` schedules after `afterName` (the extra one says more remain),
 * as rows of `select` (`name` among them; never whole rows, which may be megabytes each).
 * The group lives in the job options' JSON, unindexed: a schedule table is thousands of rows.
 */
export async function schedulesPage(tx: SqlExecutor, filter: NormalizedScheduleFilter, afterName: string | null, limit: number, select: Sql): Promise<Row[]> {
  const where = scheduleWhere(tx, filter, afterName === null ? [] : [sql`name > ${afterName}`]);
  const { rows } = await tx.run(sql`SELECT ${select} FROM job_queue_schedules ${where} ORDER BY name LIMIT ${limit + 1}`);
  return rows;
}

/** The WHERE clause of `filter` and `more` conditions (empty when there are none). */
function scheduleWhere(tx: SqlExecutor, filter: NormalizedScheduleFilter, more: Sql[]): Sql {
  const conditions = [
    ...(filter.name === undefined ? [] : [sql`name = ${filter.name}`]),
    ...(filter.type === undefined ? [] : [sql`job_type = ${filter.type}`]),
    ...(filter.group === undefined ? [] : [sql`${jobOptionText(tx, 'group')} = ${filter.group}`]),
    ...(filter.lastRunState === undefined ? [] : [lastRunIn(tx.dialect, filter.lastRunState)]),
    ...more,
  ];
  return conditions.length ? sql`WHERE ${sql.join(conditions, ' AND ')}` : sql``;
}

/** A text field of `job_options` (JSON stored as text on every dialect). */
function jobOptionText(tx: SqlExecutor, field: 'group'): Sql {
  // `field` is one of a fixed set of names, never input: written into the statement as a literal.
  switch (tx.dialect.name) {
    case 'postgres':
      return sql`(job_options::jsonb ->> ${sql.raw(`'${field}'`)})`;
    case 'mysql':
      return sql`JSON_UNQUOTE(JSON_EXTRACT(job_options, ${sql.raw(`'$.${field}'`)}))`;
    default:
      return sql`json_extract(job_options, ${sql.raw(`'$.${field}'`)})`;
  }
}

/** The `limit` schedules due soonest, and how many fire in all (one statement); lapsed declarations are left out. */
export async function soonestSchedules(
  tx: SqlExecutor,
  limit: number,
): Promise<{ schedules: Array<{ name: string; nextRunAt: Date; lastRunAt: Date | null }>; count: number }> {
  const t = (c: string) => tx.dialect.selectTime(c);
  const { rows } = await tx.run(sql`SELECT name, ${t('next_run_at')} AS next_run_at, ${t('last_slot')} AS last_slot, COUNT(*) OVER () AS total
    FROM job_queue_schedules WHERE ${declared(tx.dialect.now())} ORDER BY next_run_at, name LIMIT ${limit}`);
  return {
    schedules: rows.map((r) => ({ name: String(r.name), nextRunAt: tx.dialect.parseTime(r.next_run_at)!, lastRunAt: tx.dialect.parseTime(r.last_slot) })),
    count: rows.length ? Number(rows[0].total) : 0,
  };
}

function definitionValues(tx: SqlExecutor, def: ScheduleDefinition) {
  return {
    backfill: String(def.backfill),
    args: JSON.stringify(def.args),
    job: JSON.stringify(def.job),
  };
}

/**
 * Inserts a new schedule; a concurrent insert of the same name fails with a unique violation.
 * `declarationTtlMs`: an `@Recurring` declaration's lease, null for `schedule()`.
 */
export async function insertSchedule(tx: SqlExecutor, def: ScheduleDefinition, nextRunAt: Date, declarationTtlMs: number | null): Promise<void> {
  const v = definitionValues(tx, def);
  await tx.run(sql`INSERT INTO job_queue_schedules
    (name, cron, time_zone, job_type, args, backfill, misfire_grace_ms, job_options, next_run_at, created_at, updated_at, declared_since, declared_until)
    VALUES (${def.name}, ${def.cron}, ${def.timeZone}, ${def.type}, ${v.args}, ${v.backfill}, ${def.misfireGraceMs}, ${v.job},
      ${tx.dialect.timeParam(nextRunAt)}, ${tx.dialect.now()}, ${tx.dialect.now()},
      ${declarationTtlMs === null ? sql`NULL` : tx.dialect.now()}, ${declaration(tx, declarationTtlMs)})`);
}

/** Replaces a schedule's definition and who declares it; slots already enqueued stay enqueued. */
export async function updateScheduleDefinition(tx: SqlExecutor, def: ScheduleDefinition, nextRunAt: Date, declarationTtlMs: number | null): Promise<void> {
  const v = definitionValues(tx, def);
  await tx.run(sql`UPDATE job_queue_schedules SET cron = ${def.cron}, time_zone = ${def.timeZone}, job_type = ${def.type},
    args = ${v.args}, backfill = ${v.backfill}, misfire_grace_ms = ${def.misfireGraceMs}, job_options = ${v.job},
    next_run_at = ${tx.dialect.timeParam(nextRunAt)}, updated_at = ${tx.dialect.now()}, ${redeclare(tx, declarationTtlMs)}
    WHERE name = ${def.name}`);
}

/**
 * Who keeps an unchanged schedule: a decorator declaring it again at start-up (`ttlMs`; a runtime
 * row of that name becomes the decorator's), or `schedule()` taking it over (null).
 */
export async function declareSchedule(tx: SqlExecutor, name: string, ttlMs: number | null): Promise<void> {
  await tx.run(sql`UPDATE job_queue_schedules SET ${redeclare(tx, ttlMs)} WHERE name = ${name}`);
}

/**
 * Renews the declarations of a process's `@Recurring` schedules. Runtime rows of the same name
 * (someone called `schedule()` since) and deleted ones (`unschedule()`) stay as they are.
 */
export async function renewDeclarations(tx: SqlExecutor, names: readonly string[], ttlMs: number): Promise<void> {
  // Name order: two processes renewing the same rows lock them in the same order.
  for (const chunk of chunked([...names].sort(), TICKS_PER_STATEMENT)) {
    await tx.run(sql`UPDATE job_queue_schedules SET ${redeclare(tx, ttlMs)}
      WHERE name IN (${sql.list(chunk)}) AND declared_until IS NOT NULL`);
  }
}

/** Deletes `@Recurring` schedules whose declaration lapsed more than `afterMs` ago; how many. */
export async function pruneLapsedDeclarations(tx: SqlExecutor, afterMs: number): Promise<number> {
  const { affected } = await tx.run(sql`DELETE FROM job_queue_schedules WHERE declared_until < ${tx.dialect.addMs(tx.dialect.now(), -afterMs)}`);
  return affected;
}

export async function deleteSchedule(tx: SqlExecutor, name: string): Promise<boolean> {
  return (await tx.run(sql`DELETE FROM job_queue_schedules WHERE name = ${name}`)).affected > 0;
}

/** A cheap autocommit probe, so idle ticks open no transaction (and take no SQLite write lock). */
export async function anyScheduleDue(tx: SqlExecutor): Promise<boolean> {
  const now = tx.dialect.now();
  const { rows } = await tx.run(sql`SELECT name FROM job_queue_schedules WHERE next_run_at <= ${now} AND ${declared(now)} LIMIT 1`);
  return rows.length > 0;
}

/**
 * Due schedules, locked for this tick: another replica's tick skips them (SKIP LOCKED) rather
 * than waiting, and reads them again only after this transaction has moved `next_run_at` on.
 * SQLite has no row locks; its BEGIN IMMEDIATE transaction holds the database's write lock.
 *
 * Locks up to `limit` of them reading their names and sizes only, then reads the whole rows of
 * the first ones within `maxChars` of args and job options (always one at least). The rest stay
 * locked, unread, until the commit, and due. Read whole, 500 schedules with 1 MB args were
 * 500 MB in one result, and their jobs one PostgreSQL insert past V8's longest string.
 * `locked`: how many were locked, read or not.
 */
export async function lockDueSchedules(tx: SqlExecutor, limit: number, maxChars: number): Promise<{ now: Date; due: StoredSchedule[]; locked: number }> {
  const now = await databaseNow(tx);
  const lock = tx.dialect.name === 'sqlite' ? sql`` : sql` FOR UPDATE SKIP LOCKED`;
  const { rows } = await tx.run(sql`SELECT name, ${scheduleChars(tx)} AS chars FROM job_queue_schedules
    WHERE next_run_at <= ${tx.dialect.timeParam(now)} AND ${declared(sql`${tx.dialect.timeParam(now)}`)}
    ORDER BY next_run_at, name LIMIT ${limit}${lock}`);
  const names = takeBatch([...rows], rows.length, maxChars, (r) => Number(r.chars)).map((r) => String(r.name));
  return { now, due: await schedulesByName(tx, names), locked: rows.length };
}

/** What a tick did to one schedule: slots up to `last` are enqueued (null: none), `next` is the next one. */
export interface TickRecord {
  name: string;
  last: Date | null;
  next: Date;
}

/**
 * Records a tick's schedules in one statement per chunk (one UPDATE per schedule cost a round
 * trip each: at 10,000 schedules due at once, most of the tick).
 */
export async function recordTicks(tx: SqlExecutor, ticks: readonly TickRecord[]): Promise<void> {
  const d = tx.dialect;
  // PostgreSQL types a CASE branch's parameter from the other branches: text without the cast.
  const time = (at: Date) => (d.name === 'postgres' ? sql`${d.timeParam(at)}::timestamptz` : sql`${d.timeParam(at)}`);
  for (const chunk of chunked(ticks, TICKS_PER_STATEMENT)) {
    const enqueued = chunk.filter((t) => t.last !== null);
    const last = enqueued.length
      ? sql`last_slot = CASE name ${sql.join(enqueued.map((t) => sql`WHEN ${t.name} THEN ${time(t.last!)}`), ' ')} ELSE last_slot END,
        last_enqueued_at = CASE WHEN name IN (${sql.list(enqueued.map((t) => t.name))}) THEN ${d.now()} ELSE last_enqueued_at END,`
      : sql``;
    await tx.run(sql`UPDATE job_queue_schedules SET ${last}
      next_run_at = CASE name ${sql.join(chunk.map((t) => sql`WHEN ${t.name} THEN ${time(t.next)}`), ' ')} END
      WHERE name IN (${sql.list(chunk.map((t) => t.name))})`);
  }
}

/** Schedules per UPDATE: six parameters each at most, far below every dialect's limit. */
const TICKS_PER_STATEMENT = 500;

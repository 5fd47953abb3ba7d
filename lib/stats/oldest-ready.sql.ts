import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';

/**
 * Rows read per (type, priority) beyond its earliest-due ready job, at most. The value is exact
 * unless that many of one level's jobs were due before the level's oldest claimable job became
 * claimable (see readOldestReady).
 */
export const OLDEST_READY_CANDIDATES = 100;

export interface OldestReady {
  /** Age in ms of the longest-waiting claimable job (0 when none). */
  ageMs: number;
  /**
   * False when some level had OLDEST_READY_CANDIDATES candidates and none of them became
   * claimable by the last one's due time: `ageMs` is then a real job's wait, which the true
   * maximum may exceed by at most that job's claimable time minus the last candidate's due time.
   */
  exact: boolean;
}

/** Age in ms of the longest-waiting claimable job (0 when none). */
export async function readOldestReadyAgeMs(db: SqlExecutor): Promise<number> {
  return (await readOldestReady(db)).ageMs;
}

/**
 * The oldest claimable job, read through the ready index (type, priority, run_after, id) rather
 * than over every ready row: a job became claimable at `c` = max(run_after, updated_at) (due, or
 * promoted/handed back later), and c >= run_after. Per (type, priority) level, walked as a loose
 * index scan, the earliest-due job gives an upper bound on the level's oldest c; only jobs due
 * before that bound can beat it, and at most OLDEST_READY_CANDIDATES of them are read. Rows past
 * them are due no earlier than the last one read, so if the best c read is no later than that,
 * the result is exact; else it is off by at most the difference (`exact: false`). The cost
 * depends on the number of levels, not of ready jobs: 200,000 ready rows were read whole before.
 */
export async function readOldestReady(db: SqlExecutor): Promise<OldestReady> {
  if (db.dialect.name === 'mysql') return readOldestReadyMysql(db);
  if (db.dialect.name === 'sqlite') return readOldestReadySqlite(db);
  const { rows } = await db.run(oldestReadyStatement(db));
  const r = rows[0] ?? {};
  return { ageMs: Math.max(0, Math.round(Number(r.age ?? 0))), exact: Number(r.capped ?? 0) === 0 };
}

/**
 * SQLite: levels per statement. better-sqlite3 runs a statement on the event loop, and a level
 * costs about 40 us: one statement over 10,000 levels (100 types x 100 priorities) held the
 * worker's handlers and requests for 0.4-0.5 s on every health check and scrape.
 */
export const SQLITE_LEVELS_PER_STATEMENT = 32;

/** A (type, priority) level of the ready jobs: a SQLite slice of the read starts after it. */
export interface ReadyLevel {
  type: string;
  priority: number;
}

/** SQLite: the levels in slices (SQLITE_LEVELS_PER_STATEMENT each), a turn of the event loop between them. */
async function readOldestReadySqlite(db: SqlExecutor): Promise<OldestReady> {
  let ageMs = 0;
  let exact = true;
  let after: ReadyLevel | undefined;
  for (;;) {
    const { rows } = await db.run(oldestReadyStatement(db, after));
    const r = rows[0] ?? {};
    ageMs = Math.max(ageMs, Number(r.age ?? 0));
    if (Number(r.capped ?? 0) > 0) exact = false;
    if (Number(r.levels ?? 0) < SQLITE_LEVELS_PER_STATEMENT) break;
    after = { type: String(r.last_type), priority: Number(r.last_priority) };
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { ageMs: Math.max(0, Math.round(ageMs)), exact };
}

/**
 * PostgreSQL: one statement (loose index scan of the levels, then two probes each). SQLite: the
 * same for the SQLITE_LEVELS_PER_STATEMENT levels after `after` (from the first without it),
 * also returning how many levels it read and the last one.
 */
export function oldestReadyStatement(db: SqlExecutor, after?: ReadyLevel): Sql {
  const d = db.dialect;
  const now = d.now();
  const k = OLDEST_READY_CANDIDATES;
  const level = (alias: string) => sql.raw(`j.state = 'ready' AND j.type = ${alias}.type AND j.priority = ${alias}.priority`);
  if (d.name === 'postgres') {
    return sql`WITH RECURSIVE lv (type, priority) AS (
        (SELECT type, priority FROM jobs WHERE state = 'ready' ORDER BY type, priority DESC LIMIT 1)
        UNION ALL
        SELECT n.type, n.priority FROM lv CROSS JOIN LATERAL (
          (SELECT j.type, j.priority FROM jobs j WHERE j.state = 'ready' AND j.type = lv.type AND j.priority < lv.priority ORDER BY j.type, j.priority DESC LIMIT 1)
          UNION ALL
          (SELECT j.type, j.priority FROM jobs j WHERE j.state = 'ready' AND j.type > lv.type ORDER BY j.type, j.priority DESC LIMIT 1)
          LIMIT 1) n)
      SELECT MAX(${d.diffMs(sql`LEAST(h.c, x.c)`, now)}) AS age,
        COUNT(*) FILTER (WHERE x.n = ${k} AND x.c > x.last) AS capped
      FROM lv
      CROSS JOIN LATERAL (SELECT GREATEST(j.run_after, j.updated_at) AS c FROM jobs j
        WHERE ${level('lv')} AND j.run_after <= ${now} ORDER BY j.run_after, j.id LIMIT 1) h
      CROSS JOIN LATERAL (SELECT MIN(GREATEST(k.run_after, k.updated_at)) AS c, MAX(k.run_after) AS last, COUNT(*) AS n FROM (
        SELECT j.run_after, j.updated_at FROM jobs j
        WHERE ${level('lv')} AND j.run_after < LEAST(h.c, ${now}) ORDER BY j.run_after, j.id LIMIT ${k}) k) x`;
  }
  // Candidates: one upper bound (LEAST of the head and now) keeps it an index range; with two,
  // SQLite ranged on `run_after <= now` and filtered the rest: every due row of the level.
  // SQLite has no LATERAL: the same probes as correlated subqueries. The level after (type,
  // priority) is the next lower priority of its type, else the next type's highest. INDEXED BY:
  // without ANALYZE statistics (the queue never runs ANALYZE) SQLite took `state = 'ready'` on
  // the state index and sorted every ready row for each step to the next type (and for the first
  // level): 66 ms per statement with 5,000 types, 7 s per read on the event loop.
  const levelAfter = (type: unknown, priority: unknown, col: string) => sql`COALESCE(
      (SELECT j.${sql.raw(col)} FROM jobs j WHERE j.state = 'ready' AND j.type = ${type} AND j.priority < ${priority} ORDER BY j.priority DESC LIMIT 1),
      (SELECT j.${sql.raw(col)} FROM jobs j INDEXED BY jobs_ready_idx WHERE j.state = 'ready' AND j.type > ${type} ORDER BY j.type, j.priority DESC LIMIT 1))`;
  const next = (col: string) => levelAfter(sql.raw('lv.type'), sql.raw('lv.priority'), col);
  const nextAfter = (a: ReadyLevel, col: string) => levelAfter(a.type, a.priority, col);
  const first = after
    ? sql`SELECT ${nextAfter(after, 'type')}, ${nextAfter(after, 'priority')}, 1`
    : sql`SELECT * FROM (SELECT type, priority, 1 FROM jobs INDEXED BY jobs_ready_idx WHERE state = 'ready' ORDER BY type, priority DESC LIMIT 1)`;
  return sql`WITH RECURSIVE lv (type, priority, n) AS (
      ${first}
      UNION ALL
      SELECT ${next('type')}, ${next('priority')}, lv.n + 1 FROM lv WHERE lv.type IS NOT NULL AND lv.n < ${SQLITE_LEVELS_PER_STATEMENT}),
    h AS MATERIALIZED (SELECT lv.type, lv.priority, lv.n, (SELECT MAX(j.run_after, j.updated_at) FROM jobs j
        WHERE ${level('lv')} AND j.run_after <= ${now} ORDER BY j.run_after, j.id LIMIT 1) AS c
      FROM lv WHERE lv.type IS NOT NULL),
    x AS MATERIALIZED (SELECT h.c AS head,
        (SELECT MIN(MAX(k.run_after, k.updated_at)) FROM (SELECT j.run_after, j.updated_at FROM jobs j
          WHERE ${level('h')} AND j.run_after < MIN(h.c, ${now}) ORDER BY j.run_after, j.id LIMIT ${k}) k) AS c,
        (SELECT j.run_after FROM jobs j
          WHERE ${level('h')} AND j.run_after < MIN(h.c, ${now}) ORDER BY j.run_after, j.id LIMIT 1 OFFSET ${k - 1}) AS last
      FROM h WHERE h.c IS NOT NULL)
    SELECT MAX(${d.diffMs(sql`MIN(x.head, COALESCE(x.c, x.head))`, now)}) AS age,
      SUM(CASE WHEN x.last IS NOT NULL AND x.c > x.last THEN 1 ELSE 0 END) AS capped,
      (SELECT COUNT(*) FROM h) AS levels,
      (SELECT type FROM h ORDER BY n DESC LIMIT 1) AS last_type,
      (SELECT priority FROM h ORDER BY n DESC LIMIT 1) AS last_priority FROM x`;
}

/**
 * MySQL/MariaDB: one statement per level. MariaDB reads a correlated subquery's range (type >
 * outer.type) by `ref` on its equality prefix only, i.e. the whole stretch (125,000 rows per
 * step here), so the loose scan is driven from here with bound values, each level's statement
 * also finding the next level. At most OLDEST_READY_CANDIDATES rows per level: the earliest due.
 */
async function readOldestReadyMysql(db: SqlExecutor): Promise<OldestReady> {
  let level: Record<string, unknown> | undefined = (await db.run(mysqlFirstLevel())).rows[0];
  let ageMs = 0;
  let exact = true;
  while (level) {
    const { rows } = await db.run(mysqlLevelStatement(String(level.type), Number(level.neg_priority)));
    const r = rows[0];
    if (r.age != null) ageMs = Math.max(ageMs, Number(r.age));
    if (Number(r.n) === OLDEST_READY_CANDIDATES && Number(r.capped) === 1) exact = false;
    level = r.type == null ? undefined : r;
  }
  return { ageMs: Math.max(0, Math.round(ageMs)), exact };
}

function mysqlFirstLevel(): Sql {
  return sql`SELECT type, neg_priority FROM jobs FORCE INDEX (jobs_ready_idx) WHERE state = 'ready' ORDER BY state, type, neg_priority LIMIT 1`;
}

/**
 * A level's oldest claimable job among its earliest-due OLDEST_READY_CANDIDATES (the first of
 * them bounds the rest, as in oldestReadyStatement), and the next level in index order.
 */
export function mysqlLevelStatement(type: string, negPriority: number): Sql {
  const now = sql`UTC_TIMESTAMP(3)`;
  return sql`SELECT a.age, a.n, a.capped, b.type, b.neg_priority FROM (
      SELECT TIMESTAMPDIFF(MICROSECOND, MIN(k.c), ${now}) / 1000 AS age, COUNT(*) AS n, MIN(k.c) > MAX(k.run_after) AS capped FROM (
        SELECT GREATEST(run_after, updated_at) AS c, run_after FROM jobs FORCE INDEX (jobs_ready_idx)
        WHERE state = 'ready' AND type = ${type} AND neg_priority = ${negPriority} AND run_after <= ${now}
        ORDER BY run_after, id LIMIT ${OLDEST_READY_CANDIDATES}) k) a
    LEFT JOIN (SELECT type, neg_priority FROM jobs FORCE INDEX (jobs_ready_idx)
      WHERE state = 'ready' AND (type > ${type} OR (type = ${type} AND neg_priority > ${negPriority}))
      ORDER BY state, type, neg_priority LIMIT 1) b ON 1 = 1`;
}

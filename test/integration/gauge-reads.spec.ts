import { sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { OLDEST_READY_CANDIDATES, oldestReadyStatement, readOldestReady, SQLITE_LEVELS_PER_STATEMENT } from '../../lib/stats/oldest-ready.sql';
import { readStateCounts } from '../../lib/stats/queue-stats.sql';
import { SQLITE_COUNT_SLICE, sqliteSliceStatement } from '../../lib/stats/state-counts.sql';
import { describeDialects } from '../support/describe-dialects';
import { numbers } from '../support/number-rows';
import { explainText, mysqlRowsRead } from '../support/plan-reads';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

const READY_PER_LEVEL = 5_000;
const DONE = 30_000;
const S = 1_000;
const MIN = 60 * S;

/** The database clock plus `ms` (a SQL expression in `i`). */
const at = (app: QueueApp, ms: string) => app.db.dialect.addMs(app.db.dialect.now(), sql`${sql.raw(`(${ms})`)}`);

/** `n` rows of one type, state and priority; `runAfter` and `updatedAt` are ms from now, expressions in i. */
async function insertJobs(app: QueueApp, n: number, job: { type: string; state: string; priority?: number; runAfter: string; updatedAt?: string }): Promise<void> {
  const updated = at(app, job.updatedAt ?? job.runAfter);
  await app.db.run(sql`INSERT INTO jobs (type, args, state, priority, run_after, created_at, updated_at)
    SELECT ${job.type}, '{}', ${job.state}, ${job.priority ?? 0}, ${at(app, job.runAfter)}, ${at(app, job.runAfter)}, ${updated} FROM ${numbers(app, n)}`);
}

/** What the gauge read before: every ready, due row (b9a4936), as the reference value. */
async function fullScanAgeMs(db: SqlExecutor): Promise<number> {
  const d = db.dialect;
  const { rows } = await db.run(sql`SELECT MAX(${d.diffMs(sql`CASE WHEN run_after > updated_at THEN run_after ELSE updated_at END`, d.now())}) AS age
    FROM jobs WHERE state = 'ready' AND run_after <= ${d.now()}`);
  return Math.max(0, Math.round(Number(rows[0]?.age ?? 0)));
}

/** The oldest-ready read and the reference, and how far apart in time they were read. */
async function bothAges(app: QueueApp): Promise<{ read: { ageMs: number; exact: boolean }; reference: number; slackMs: number }> {
  const started = performance.now();
  const read = await readOldestReady(app.db);
  const reference = await fullScanAgeMs(app.db);
  return { read, reference, slackMs: performance.now() - started + 2 };
}

describeDialects('the metrics gauges and the health check read a bounded part of a large table', (db) => {
  let app: QueueApp;

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['a', 'b', 'c'] });
  });
  afterAll(() => app?.close());

  describe('with 20,000 ready jobs in four (type, priority) levels beside 30,000 done', () => {
    beforeAll(async () => {
      await resetTables(app);
      await insertJobs(app, DONE, { type: 'a', state: 'done', runAfter: `-86400000 + i` });
      // Enqueued ready (claimable since due), one every second from two hours ago.
      await insertJobs(app, READY_PER_LEVEL, { type: 'a', state: 'ready', runAfter: `-7200000 + i * 1000` });
      await insertJobs(app, READY_PER_LEVEL, { type: 'a', state: 'ready', priority: 3, runAfter: `-7000000 + i * 1000` });
      await insertJobs(app, READY_PER_LEVEL, { type: 'b', state: 'ready', runAfter: `-6000000 + i * 1000` });
      // (b, 3): its earliest-due 60 were promoted 90 minutes ago; the level's (and the queue's)
      // oldest claimable job is the first enqueued one, due three hours ago, 61st in due order.
      await insertJobs(app, 60, { type: 'b', state: 'ready', priority: 3, runAfter: `-18000000 + i * 1000`, updatedAt: `-5400000 + i * 1000` });
      await insertJobs(app, READY_PER_LEVEL - 60, { type: 'b', state: 'ready', priority: 3, runAfter: `-10800000 + i * 1000` });
      // Not due yet: never counted.
      await insertJobs(app, 100, { type: 'c', state: 'ready', runAfter: `86400000 + i` });
      await app.rows(db.dialect === 'mysql' ? 'ANALYZE TABLE jobs' : 'ANALYZE');
    }, 120_000);

    it('the oldest ready age is exactly what the full scan found', async () => {
      const { read, reference, slackMs } = await bothAges(app);
      expect(read.exact).toBe(true);
      expect(Math.abs(read.ageMs - reference)).toBeLessThanOrEqual(slackMs);
      expect(reference).toBeGreaterThan(3 * 60 * MIN - 2 * S); // (b, 3)'s first enqueued job, not a promoted one
      expect(reference).toBeLessThan(3 * 60 * MIN + MIN);
    });

    it('reads a few rows per level, not the 20,000 ready ones', async () => {
      const d = db.dialect;
      if (d === 'postgres') {
        const plan = await explainText(app, 'EXPLAIN (ANALYZE)', oldestReadyStatement(app.db));
        expect(plan).not.toMatch(/Seq Scan on jobs|Bitmap Heap Scan on jobs/);
        // Rows the scans of jobs returned (rows × loops): the levels' heads and (b, 3)'s candidates.
        const read = [...plan.matchAll(/Index (?:Only )?Scan using \w+ on jobs.*actual time=\S+ rows=(\d+) loops=(\d+)/g)].reduce((n, m) => n + Number(m[1]) * Number(m[2]), 0);
        expect(read).toBeGreaterThan(0);
        expect(read).toBeLessThan(4 * 10 + 2 * OLDEST_READY_CANDIDATES);
      } else if (d === 'mysql') {
        const { result, read } = await mysqlRowsRead(app, (tx) => readOldestReady(tx));
        expect(result.exact).toBe(true);
        // Five levels (c's is not due): each reads its candidates by index, then back from the
        // derived table (Handler_read_rnd_next), and probes for the next level.
        expect(read).toBeLessThan(5 * (2 * OLDEST_READY_CANDIDATES + 10));
      } else {
        const plan = await explainText(app, 'EXPLAIN QUERY PLAN', oldestReadyStatement(app.db));
        // Every probe is an index range under a fixed type and priority, or a step to the next level;
        // a full read shows as SCAN, or as ANY(type) AND ANY(priority) (a skip-scan of the index).
        // The only SCAN is the first level's: the ready index's first entry (LIMIT 1).
        expect(plan).not.toMatch(/SCAN j\b|ANY\(/);
        expect(plan.match(/SCAN jobs.*/g)).toEqual(['SCAN jobs USING COVERING INDEX jobs_ready_idx']);
        const searches = plan.split('\n').filter((l) => /SEARCH j /.test(l));
        expect(searches.length).toBeGreaterThan(0);
        for (const line of searches) expect(line).toMatch(/jobs_ready_idx \((type=\? AND priority[<=]\?|type>\?)/);
        // A later slice starts after a level: its first level is two probes of the index too.
        const sliced = await explainText(app, 'EXPLAIN QUERY PLAN', oldestReadyStatement(app.db, { type: 'a', priority: 3 }));
        expect(sliced).not.toMatch(/SCAN j\b|ANY\(|SCAN jobs/);
        for (const line of sliced.split('\n').filter((l) => /SEARCH j /.test(l))) expect(line).toMatch(/jobs_ready_idx \((type=\? AND priority[<=]\?|type>\?)/);
      }
    });

    it('counts every state exactly, SQLite in slices of its state index', async () => {
      const { rows } = await app.db.run(sql`SELECT state, COUNT(*) AS n FROM jobs GROUP BY state`);
      const expected = { waiting: 0, ready: 4 * READY_PER_LEVEL + 100, leased: 0, running: 0, done: DONE, failed: 0, cancelled: 0 };
      expect(Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]))).toEqual({ ready: expected.ready, done: DONE });
      if (db.dialect !== 'sqlite') {
        expect(await readStateCounts(app.db)).toEqual(expected);
        return;
      }
      // better-sqlite3 runs each statement on the event loop: none may count more than a slice.
      const counted: number[] = [];
      const recording: SqlExecutor = {
        dialect: app.db.dialect,
        run: async (statement) => {
          const result = await app.db.run(statement);
          for (const r of result.rows) counted.push(Number(r.n));
          return result;
        },
      };
      expect(await readStateCounts(recording)).toEqual(expected);
      expect(Math.max(...counted)).toBe(SQLITE_COUNT_SLICE);
      expect(counted.reduce((a, b) => a + b, 0)).toBe(DONE + expected.ready);
      const plan = await explainText(app, 'EXPLAIN QUERY PLAN', sqliteSliceStatement('done', 0));
      expect(plan).toMatch(/SEARCH jobs USING COVERING INDEX jobs_state_id_idx \(state=\? AND id>\?\)/);
    });
  });

  it('is exact with no ready job, with only delayed ones, and with a promoted job alone', async () => {
    await resetTables(app);
    expect(await readOldestReady(app.db)).toEqual({ ageMs: 0, exact: true });
    await insertJobs(app, 3, { type: 'a', state: 'ready', runAfter: `60000 + i` });
    await insertJobs(app, 3, { type: 'a', state: 'waiting', runAfter: `-60000 + i` });
    expect(await readOldestReady(app.db)).toEqual({ ageMs: 0, exact: true });
    // Due an hour ago, claimable (promoted) 10 minutes ago: its wait is 10 minutes.
    await insertJobs(app, 1, { type: 'a', state: 'ready', runAfter: `-3600000`, updatedAt: `-600000` });
    const { read, reference, slackMs } = await bothAges(app);
    expect(read.exact).toBe(true);
    expect(Math.abs(read.ageMs - reference)).toBeLessThanOrEqual(slackMs);
    expect(reference).toBeGreaterThanOrEqual(10 * MIN);
    expect(reference).toBeLessThan(11 * MIN);
  });

  /**
   * The read walks every (type, priority) level of the ready jobs. On SQLite it was one statement,
   * run on the event loop: with 10,000 levels (100 types x 100 priorities) it held the worker's
   * handlers and requests for 486 ms on every health check and scrape
   * (`.scratch/health-levels.cjs`); in slices of 32 levels the longest statement took 14.5 ms.
   */
  it('300 levels: the age is exact wherever the oldest job sits; SQLite reads them a slice at a time', async () => {
    await resetTables(app);
    for (const type of ['a', 'b', 'c']) {
      await app.db.run(sql`INSERT INTO jobs (type, args, state, priority, run_after, created_at, updated_at)
        SELECT ${type}, '{}', 'ready', i - 1, ${at(app, '-60000 - i')}, ${at(app, '-60000 - i')}, ${at(app, '-60000 - i')} FROM ${numbers(app, 100)}`);
    }
    // The oldest, two hours, in the last level walked: type c's lowest priority.
    await insertJobs(app, 1, { type: 'c', state: 'ready', priority: 0, runAfter: `-7200000` });
    const statements: number[] = [];
    const recording: SqlExecutor = {
      dialect: app.db.dialect,
      run: async (statement) => {
        const result = await app.db.run(statement);
        if (result.rows[0] && 'levels' in result.rows[0]) statements.push(Number(result.rows[0].levels));
        return result;
      },
    };
    const started = performance.now();
    const read = await readOldestReady(recording);
    const reference = await fullScanAgeMs(app.db);
    expect(read.exact).toBe(true);
    expect(Math.abs(read.ageMs - reference)).toBeLessThanOrEqual(performance.now() - started + 2);
    expect(reference).toBeGreaterThanOrEqual(120 * MIN);
    if (db.dialect === 'sqlite') {
      // Before: one statement over all 300 levels.
      expect(Math.max(...statements)).toBe(SQLITE_LEVELS_PER_STATEMENT);
      expect(statements.reduce((a, b) => a + b, 0)).toBe(300);
    }
  });

  it('past the candidates it reads, says it is not exact, and stays within the documented bound', async () => {
    await resetTables(app);
    // 150 jobs due five hours ago, one a second; the first 100 promoted 30 minutes ago, the
    // last 50 an hour ago: the oldest claimable job is the 101st in due order.
    const k = OLDEST_READY_CANDIDATES;
    await insertJobs(app, k, { type: 'c', state: 'ready', runAfter: `-18000000 + i * 1000`, updatedAt: `-1800000` });
    await insertJobs(app, 50, { type: 'c', state: 'ready', runAfter: `-18000000 + (${k} + i) * 1000`, updatedAt: `-3600000` });
    const { read, reference, slackMs } = await bothAges(app);
    expect(read.exact).toBe(false);
    expect(reference).toBeGreaterThanOrEqual(60 * MIN);
    // A real job's wait (the 100 read): never more than the truth, and short of it by at most
    // (its claimable time - the 100th candidate's due time): 30 min ago - (5 h - 100 s) ago.
    expect(read.ageMs).toBeLessThanOrEqual(reference + slackMs);
    expect(read.ageMs).toBeGreaterThanOrEqual(30 * MIN);
    expect(read.ageMs).toBeLessThan(31 * MIN);
    expect(reference - read.ageMs).toBeLessThanOrEqual(5 * 60 * MIN - k * S - 30 * MIN + slackMs);
  });
});

/**
 * The queue never runs ANALYZE, so a SQLite database in use has no statistics, and there the
 * planner took `state = 'ready'` on the state index for the step to the next type and for the
 * first level, sorting every ready row: with 200,000 ready jobs in 4 types the read's first
 * statement held the event loop for 800 ms on every scrape and health check, and with 5,000
 * types a read took 7 s (66 ms per statement). The spec above runs ANALYZE, which hid it.
 */
describeDialects(
  'the oldest ready age on SQLite without ANALYZE statistics',
  (db) => {
    let app: QueueApp;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['a'] });
      for (const type of ['a', 'b', 'c', 'd']) await insertJobs(app, 2_000, { type, state: 'ready', priority: 0, runAfter: `-60000 - i` });
    });
    afterAll(() => app?.close());

    it('every probe, the first level and the steps to the next type included, goes through the ready index', async () => {
      expect(await app.rows(`SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'`)).toEqual([]);
      for (const statement of [oldestReadyStatement(app.db), oldestReadyStatement(app.db, { type: 'a', priority: 0 })]) {
        const plan = await explainText(app, 'EXPLAIN QUERY PLAN', statement);
        const reads = plan.split('\n').filter((l) => /(SCAN|SEARCH) (j|jobs)\b/.test(l));
        expect(reads.length).toBeGreaterThan(0);
        // Before: `SEARCH j USING INDEX jobs_state_id_idx (state=?)` and a temp B-tree for ORDER BY.
        for (const line of reads) expect(line).toMatch(/INDEX jobs_ready_idx\b/);
      }
      const { read, reference, slackMs } = await bothAges(app);
      expect(Math.abs(read.ageMs - reference)).toBeLessThanOrEqual(slackMs);
    });
  },
  ['sqlite'],
);

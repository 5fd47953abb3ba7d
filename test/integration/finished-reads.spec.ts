import { THROUGHPUT_ROWS_PER_STRATUM, ThroughputHistory } from '../../lib/dashboard/throughput-history';
import { MINUTE_MS, MINUTE_STRATA, minuteStarts, minuteStrata } from '../../lib/dashboard/finished-strata';
import { finishedInStrata } from '../../lib/dashboard/finished-strata.sql';
import { databaseNow } from '../../lib/database/database-now.sql';
import { sql, type Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { readRecentFinished, SQLITE_RECENT_SLICE, sqliteRecentSlice } from '../../lib/stats/recent-finished.sql';
import { describeDialects } from '../support/describe-dialects';
import { numbers } from '../support/number-rows';
import { explainText, mysqlRowsRead } from '../support/plan-reads';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/** A busy minute: one job finished every millisecond, every tenth failed. */
const BUSY = 59_800;
/** A batched minute: 300 jobs finished together (one finalize batch, one finished_at) every 500 ms. */
const BATCHED = 36_000;

/** A bound time literal of the dialect's column type (a bare text parameter is untyped on PostgreSQL). */
function timeAt(app: QueueApp, ms: number): Sql {
  const value = app.db.dialect.timeParam(new Date(ms));
  const name = app.db.dialect.name;
  return name === 'postgres' ? sql`CAST(${value} AS timestamptz)` : name === 'mysql' ? sql`CAST(${value} AS DATETIME(3))` : sql`${value}`;
}

/** `n` finished jobs, the i-th at `start + offset(i)` ms after running 50 ms, its state a SQL expression in i. */
async function insertFinished(app: QueueApp, n: number, start: number, offsetMs: string, state: string): Promise<void> {
  const at = (shift: number) => app.db.dialect.addMs(timeAt(app, start), sql`${sql.raw(`(${offsetMs} + ${shift})`)}`);
  await app.db.run(sql`INSERT INTO jobs (type, args, state, run_after, created_at, updated_at, started_at, finished_at)
    SELECT 'noop', '{}', ${sql.raw(state)}, ${at(-50)}, ${at(-50)}, ${at(0)}, ${at(-50)}, ${at(0)} FROM ${numbers(app, n)}`);
}

describeDialects("the dashboard's throughput reads a bounded number of rows however many jobs finish; stats() counts exactly", (db) => {
  let app: QueueApp;
  let busyStart: number;

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['noop'] });
    await resetTables(app);
    const starts = minuteStarts(await databaseNow(app.db), 60);
    const quietStart = starts[60 - 1 - 5];
    busyStart = starts[60 - 1 - 10];
    // Quiet: 100 done, 20 failed and 300 cancelled, one every 100 ms.
    await insertFinished(app, 420, quietStart, 'i * 100', `CASE WHEN i <= 100 THEN 'done' WHEN i <= 120 THEN 'failed' ELSE 'cancelled' END`);
    await insertFinished(app, BUSY, busyStart, 'i', `CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'done' END`);
    const batch = db.dialect === 'postgres' ? '((i - 1) / 300)' : db.dialect === 'mysql' ? '((i - 1) DIV 300)' : 'CAST((i - 1) / 300 AS INTEGER)';
    await insertFinished(app, BATCHED, starts[60 - 1 - 20], `${batch} * 500`, `CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'done' END`);
    await app.rows(db.dialect === 'mysql' ? 'ANALYZE TABLE jobs' : 'ANALYZE');
  }, 120_000);
  afterAll(() => app?.close());

  it('counts a quiet minute exactly and extrapolates a busy one from its stretches', async () => {
    const minutes = await new ThroughputHistory(60).read(app.db);
    expect(minutes).toHaveLength(60);
    const nonEmpty = minutes.filter((m) => m.done || m.failed);
    // Found by content, not position: the clock may pass a minute boundary between set-up and read.
    expect(nonEmpty).toHaveLength(3);
    const [batched, busy, quiet] = nonEmpty;
    expect(quiet).toMatchObject({ done: 100, failed: 20, estimated: false });
    for (const [minute, total] of [[busy, BUSY], [batched, BATCHED]] as const) {
      expect(minute.estimated).toBe(true);
      expect(minute.done).toBeGreaterThan(total * 0.9 * 0.9);
      expect(minute.done).toBeLessThan(total * 0.9 * 1.1);
      expect(minute.failed).toBeGreaterThan(total * 0.1 * 0.9);
      expect(minute.failed).toBeLessThan(total * 0.1 * 1.1);
    }
  });

  it('reads each minute until it has settled, then never again', async () => {
    let statements = 0;
    const counting: SqlExecutor = { dialect: app.db.dialect, run: (s) => (statements++, app.db.run(s)) };
    const history = new ThroughputHistory(60);
    await history.read(counting);
    expect(statements).toBe(1 + 60); // the clock, then one statement per minute
    statements = 0;
    await history.read(counting);
    // The clock, the minute in progress and up to two that ended less than a minute ago.
    expect(statements).toBeGreaterThanOrEqual(2);
    expect(statements).toBeLessThanOrEqual(4);
  });

  it('stats() counts the recent window exactly, SQLite in slices', async () => {
    const quiet = (await app.queue.stats({ windowMs: 7 * MINUTE_MS })).recent;
    expect(quiet).toEqual({ windowMs: 7 * MINUTE_MS, done: 100, failed: 20, failureRate: 20 / 120, meanDurationMs: 50 });
    const busy = (await app.queue.stats({ windowMs: 15 * MINUTE_MS })).recent;
    expect(busy).toEqual({ windowMs: 15 * MINUTE_MS, done: 100 + BUSY * 0.9, failed: 20 + BUSY * 0.1, failureRate: (20 + BUSY * 0.1) / (120 + BUSY), meanDurationMs: 50 });
    expect((await app.queue.stats({ windowMs: 3 * MINUTE_MS })).recent).toMatchObject({ done: 0, failed: 0, failureRate: 0, meanDurationMs: null });
    let statements = 0;
    const counting: SqlExecutor = { dialect: app.db.dialect, run: (s) => (statements++, app.db.run(s)) };
    expect(await readRecentFinished(counting, 30 * MINUTE_MS)).toEqual({ done: 100 + (BUSY + BATCHED) * 0.9, failed: 20 + (BUSY + BATCHED) * 0.1, meanDurationMs: 50 });
    // SQLite: the clock, then per 10,000 finished rows (cancelled ones too) their sizes and the slice.
    const rows = 420 + BUSY + BATCHED;
    expect(statements).toBe(db.dialect === 'sqlite' ? 1 + 2 * Math.ceil(rows / SQLITE_RECENT_SLICE) + (rows % SQLITE_RECENT_SLICE ? 0 : 1) : 1);
    if (db.dialect === 'sqlite') {
      // Each slice starts in the index where the last one stopped, not at the window's start.
      const plan = await explainText(app, 'EXPLAIN QUERY PLAN', sqliteRecentSlice('2026-01-01 00:00:00.000', { at: '2026-01-01 00:00:01.000', id: 5 }));
      expect(plan).toMatch(/SEARCH jobs USING INDEX jobs_finished_idx \(finished_at>\?\)/);
      expect(sqliteRecentSlice('2026-01-01 00:00:00.000', { at: '2026-01-01 00:00:01.000', id: 5 }).render('sqlite').params[0]).toBe('2026-01-01 00:00:01.000');
    }
  });

  it("a minute's statement walks the finished index and reads at most its cap per stretch", async () => {
    const statement = finishedInStrata(app.db.dialect, minuteStrata(busyStart, busyStart + MINUTE_MS), THROUGHPUT_ROWS_PER_STRATUM);
    const bound = MINUTE_STRATA * THROUGHPUT_ROWS_PER_STRATUM;
    if (db.dialect === 'postgres') {
      const plan = await explainText(app, 'EXPLAIN (ANALYZE)', statement);
      expect(plan).not.toMatch(/Seq Scan on jobs|Bitmap Heap Scan on jobs/);
      // Per stretch: its rows, and the cap-th one's instant.
      const read = [...plan.matchAll(/Index (?:Only )?Scan using (\w+) on jobs.*actual time=\S+ rows=(\d+) loops=(\d+)/g)];
      expect(read.map((m) => m[1])).toEqual(Array(2 * MINUTE_STRATA).fill('jobs_finished_idx'));
      expect(read.reduce((n, m) => n + Number(m[2]) * Number(m[3]), 0)).toBeLessThanOrEqual(2 * bound);
    } else if (db.dialect === 'mysql') {
      const { result, read } = await mysqlRowsRead(app, (tx) => tx.run(statement));
      expect(result.rows.reduce((n, r) => n + Number(r.n), 0)).toBe(bound);
      // Each stretch's index entries, twice (the rows, then the cap-th one's instant), the derived
      // tables' rows read back (Handler_read_rnd_next) and the grouping's: a few reads per row
      // taken, whatever the table holds (96,220 finished rows here).
      expect(read).toBeLessThan(8 * bound);
      expect(8 * bound).toBeLessThan(BUSY + BATCHED);
    } else {
      const plan = await explainText(app, 'EXPLAIN QUERY PLAN', statement);
      const reads = plan.match(/(SCAN|SEARCH) jobs\b.*/g) ?? [];
      expect(reads).toHaveLength(2 * MINUTE_STRATA);
      for (const line of reads) expect(line).toMatch(/^SEARCH jobs USING (COVERING )?INDEX jobs_finished_idx \(finished_at>\? AND finished_at<\?\)$/);
    }
  });
});

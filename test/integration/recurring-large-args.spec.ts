import { jest } from '@jest/globals';
import type { RecurringArgs } from '../../lib';
import { sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { RecurringService } from '../../lib/recurring/recurring.service';
import { describeDialects } from '../support/describe-dialects';
import { textChars } from '../support/text-chars';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const ARGS_CHARS = 512 * 1024;
const SCHEDULES = 48;
const BACKFILL = 60;
/** A tick transaction's budget (16 MiB of args) plus the one schedule or slot that crosses it. */
const MAX_TICK_CHARS = 16 * 1024 * 1024 + ARGS_CHARS + 64 * 1024;

/** Every tick transaction's characters sent and read (all its statements together). */
function weighTransactions(app: QueueApp): number[] {
  const perTransaction: number[] = [];
  const transaction = app.db.transaction.bind(app.db);
  jest.spyOn(app.db, 'transaction').mockImplementation((work, options) =>
    transaction(async (tx) => {
      const at = perTransaction.push(0) - 1;
      const weighed: SqlExecutor = {
        dialect: tx.dialect,
        run: async (s) => {
          const result = await tx.run(s);
          perTransaction[at] += textChars(s) + textChars(result.rows);
          return result;
        },
      };
      return work(weighed);
    }, options) as never,
  );
  return perTransaction;
}

async function insertSchedules(app: QueueApp, rows: Array<{ name: string; cron: string; backfill: string; graceMs: number; nextRunAt: Date; n: number }>): Promise<void> {
  const pad = 'x'.repeat(ARGS_CHARS);
  const d = app.db.dialect;
  for (const r of rows) {
    await app.db.run(sql`INSERT INTO job_queue_schedules (name, cron, time_zone, job_type, args, backfill, misfire_grace_ms, job_options, next_run_at, created_at, updated_at)
      VALUES (${r.name}, ${r.cron}, 'UTC', 'big-args', ${JSON.stringify({ pad, n: r.n })}, ${r.backfill}, ${r.graceMs}, '{}', ${d.timeParam(r.nextRunAt)}, ${d.now()}, ${d.now()})`);
  }
}

/**
 * A tick locked up to 500 due schedules and read them whole, then inserted all their slots in
 * one transaction: 600 schedules with 1 MB args were a 2.7 GB tick (`.scratch/rec-big.cjs`),
 * which failed on PostgreSQL ("Invalid string length": its insert is one statement) and ran
 * SQLite's process out of heap, at every tick, so no schedule fired. A tick transaction now
 * reads and enqueues about 16 MB of args at most, a schedule's remaining slots going to the next.
 */
describeDialects('recurring schedules with large args', (db) => {
  let app: QueueApp;
  beforeEach(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['big-args'] });
    await app.db.run(sql`DELETE FROM job_queue_schedules`);
    await app.db.run(sql`DELETE FROM jobs`);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await app.close();
  });

  it(`${SCHEDULES} schedules with ${ARGS_CHARS / 1024} KB args due at once: each slot once, no transaction past ~16 MB`, async () => {
    // A yearly slot that passed while nothing ticked, backfilled: one job per schedule.
    const due = new Date(Date.UTC(new Date().getUTCFullYear(), 0, 1));
    await insertSchedules(app, Array.from({ length: SCHEDULES }, (_, n) => ({ name: `big-${n}`, cron: '0 0 1 1 *', backfill: 'last', graceMs: 60_000, nextRunAt: due, n })));
    const perTransaction = weighTransactions(app);
    await app.module.get(RecurringService).tick();

    const rows = await app.rows(`SELECT job_key FROM jobs`);
    expect(new Set(rows.map((r) => String(r.job_key).split(':')[1]))).toEqual(new Set(Array.from({ length: SCHEDULES }, (_, n) => `big-${n}`)));
    expect(rows).toHaveLength(SCHEDULES);
    // Before: one transaction of 2 x 24 MB (read, then inserted).
    expect(Math.max(...perTransaction)).toBeLessThanOrEqual(2 * MAX_TICK_CHARS);
    process.stdout.write(`[${db.dialect}] ${SCHEDULES} x ${ARGS_CHARS / 1024} KB schedules: ${perTransaction.length} tick transactions, the largest ${(Math.max(...perTransaction) / 1e6).toFixed(1)} MB\n`);
  }, 120_000);

  it(`a schedule catching up ${BACKFILL} slots of ${ARGS_CHARS / 1024} KB args: each once, over several transactions`, async () => {
    await insertSchedules(app, [{ name: 'catch-up', cron: '* * * * * *', backfill: String(BACKFILL), graceMs: 1_000, nextRunAt: new Date(Date.now() - 3_600_000), n: 0 }]);
    const perTransaction = weighTransactions(app);
    await app.module.get(RecurringService).tick();

    const rows = await app.rows(`SELECT job_key, args FROM jobs`);
    const backfilled = rows
      .map((r) => (typeof r.args === 'string' ? JSON.parse(r.args) : r.args) as RecurringArgs)
      .filter((a) => a.backfill)
      .map((a) => Date.parse(a.slot))
      .sort((a, b) => a - b);
    // The latest BACKFILL missed slots, one second apart: none twice, none skipped between them.
    expect(backfilled).toHaveLength(BACKFILL);
    expect(backfilled.every((at, i) => i === 0 || at - backfilled[i - 1] === 1_000)).toBe(true);
    expect(new Set(rows.map((r) => r.job_key)).size).toBe(rows.length);
    // Before: one transaction with all 60 slots (31 MB inserted).
    expect(Math.max(...perTransaction)).toBeLessThanOrEqual(MAX_TICK_CHARS + 2 * ARGS_CHARS);
  }, 120_000);

  it('the slots judged missed stay those of the tick\'s first transaction while the clocks drift apart', async () => {
    // The process's clock runs a second ahead of the database's at each transaction (as a step of
    // the server's clock would, or a millisecond of rounding at a second's edge, which made this
    // flaky): the grace's edge was measured again per transaction and moved, and the last missed
    // slot of the first transaction's plan was on time in the next (59 backfilled of 60).
    await insertSchedules(app, [{ name: 'catch-up', cron: '* * * * * *', backfill: String(BACKFILL), graceMs: 1_000, nextRunAt: new Date(Date.now() - 3_600_000), n: 0 }]);
    let ahead = 0;
    const now = performance.now.bind(performance);
    jest.spyOn(performance, 'now').mockImplementation(() => now() + ahead);
    const transaction = app.db.transaction.bind(app.db);
    jest.spyOn(app.db, 'transaction').mockImplementation((work, options) => {
      ahead += 1_000;
      return transaction(work, options) as never;
    });
    await app.module.get(RecurringService).tick();

    const { rows } = await app.db.run(sql`SELECT args FROM jobs`);
    const slots = rows.map((r) => (typeof r.args === 'string' ? JSON.parse(r.args) : r.args) as RecurringArgs);
    expect(ahead).toBeGreaterThanOrEqual(2_000); // several transactions
    expect(slots.filter((a) => a.backfill)).toHaveLength(BACKFILL);
  }, 120_000);
});

const PAGED_SCHEDULES = 80;
const PAGED_ARGS_CHARS = 1024 * 1024;
/** A page's budget of args (64 MiB) plus the one schedule that crosses it. */
const MAX_PAGE_CHARS = 64 * 1024 * 1024 + PAGED_ARGS_CHARS + 64 * 1024;
/** A statement's budget when reading whole schedules (8 MiB) plus the one that crosses it. */
const MAX_STATEMENT_CHARS = 8 * 1024 * 1024 + PAGED_ARGS_CHARS + 64 * 1024;

/**
 * findSchedules read a page of whole schedules in one statement and listSchedules every schedule
 * in one: 500 schedules of 1 MB args were a 1 GB page and a stall of the event loop of 2.5 s
 * (PostgreSQL) to 6 s (SQLite); listSchedules of 600 stalled it 5–9 s (`.scratch/sched-big.cjs`).
 * A page now holds about 64 MB of args, read about 8 MB per statement.
 */
describeDialects('findSchedules and listSchedules with large args', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['big-args'] });
    await app.queue.schedule({ name: 'big-000', cron: '0 0 1 1 *', type: 'big-args', args: { pad: 'x'.repeat(PAGED_ARGS_CHARS - 64) } });
    const cols = sql.raw('cron, time_zone, job_type, args, backfill, misfire_grace_ms, job_options, next_run_at, created_at, updated_at');
    for (let n = 1; n < PAGED_SCHEDULES; n++) {
      const name = `big-${String(n).padStart(3, '0')}`;
      await app.db.run(sql`INSERT INTO job_queue_schedules (name, ${cols}) SELECT ${name}, ${cols} FROM job_queue_schedules WHERE name = 'big-000'`);
    }
  }, 120_000);
  afterAll(() => app.close());

  /** Characters each statement returned, while spied on. */
  function weighStatements(): number[] {
    const perStatement: number[] = [];
    const run = app.db.run.bind(app.db);
    jest.spyOn(app.db, 'run').mockImplementation(async (s) => {
      const result = await run(s);
      perStatement.push(textChars(result.rows));
      return result;
    });
    return perStatement;
  }
  afterEach(() => jest.restoreAllMocks());

  it(`pages through ${PAGED_SCHEDULES} schedules of ${PAGED_ARGS_CHARS / 1024} KB args: each once, no page past ~64 MB`, async () => {
    const perStatement = weighStatements();
    const seen: string[] = [];
    const pages: number[] = [];
    let cursor: string | undefined;
    do {
      const page: Awaited<ReturnType<typeof app.queue.findSchedules>> = await app.queue.findSchedules({ type: 'big-args' }, { limit: 500, cursor });
      seen.push(...page.schedules.map((s) => s.name));
      pages.push(page.schedules.reduce((n, s) => n + (s.args.pad as string).length, 0));
      expect(page.schedules.every((s) => (s.args.pad as string).length === PAGED_ARGS_CHARS - 64)).toBe(true);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: PAGED_SCHEDULES }, (_, n) => `big-${String(n).padStart(3, '0')}`));
    // Before: one page, one statement of 80 MB.
    expect(Math.max(...pages)).toBeLessThanOrEqual(MAX_PAGE_CHARS);
    expect(Math.max(...perStatement)).toBeLessThanOrEqual(MAX_STATEMENT_CHARS);
    process.stdout.write(`[${db.dialect}] findSchedules: ${pages.length} pages, ${perStatement.length} statements, the largest ${(Math.max(...perStatement) / 1e6).toFixed(1)} MB\n`);
  }, 120_000);

  it(`listSchedules reads ${PAGED_SCHEDULES} schedules of ${PAGED_ARGS_CHARS / 1024} KB args about 8 MB per statement`, async () => {
    const perStatement = weighStatements();
    const all = await app.queue.listSchedules();
    expect(all.map((s) => s.name)).toEqual(Array.from({ length: PAGED_SCHEDULES }, (_, n) => `big-${String(n).padStart(3, '0')}`));
    expect(all.every((s) => (s.args.pad as string).length === PAGED_ARGS_CHARS - 64)).toBe(true);
    // Before: one statement of 80 MB.
    expect(Math.max(...perStatement)).toBeLessThanOrEqual(MAX_STATEMENT_CHARS);
  }, 120_000);
});

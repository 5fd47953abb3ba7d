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
  afterEach(() => app.close());

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
});

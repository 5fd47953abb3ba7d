import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { JobHandler, type JobContext } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const JOBS = 20;
const CALLS = 1_000;

@Injectable()
class Handlers {
  /** Reports every item without awaiting, as a loop over items often does, then awaits the last. */
  @JobHandler('fire-and-forget')
  async fireAndForget(_args: unknown, ctx: JobContext): Promise<string> {
    for (let i = 1; i < CALLS; i++) void ctx.progress((i * 100) / CALLS, `item ${i}`).catch(() => undefined);
    await ctx.progress(100, `item ${CALLS}`);
    return 'ok';
  }

  /** Reports its stages and returns without awaiting any, the last one waiting behind the first. */
  @JobHandler('last-not-awaited')
  async lastNotAwaited(_args: unknown, ctx: JobContext): Promise<string> {
    void ctx.progress(50, 'half');
    void ctx.progress(100, 'last');
    return 'ok';
  }

  @JobHandler('awaited')
  async awaited(_args: unknown, ctx: JobContext): Promise<string> {
    for (let i = 1; i <= CALLS; i++) await ctx.progress((i * 100) / CALLS, `item ${i}`);
    return 'ok';
  }
}

/**
 * `ctx.progress()` at a high rate from many jobs. Each call was an UPDATE of its own at once:
 * 40 jobs x 1,000 calls not awaited took 103 s on PostgreSQL (claims queued behind them for
 * 47 s) and left 37 of 40 jobs on a stage older than their last, the writes overtaking each
 * other on the pool; awaited on SQLite, whose writes are synchronous, they kept the event loop
 * from turning for 1.3 s (`.scratch/progress.cjs`).
 */
describeDialects('ctx.progress() at a high rate', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { concurrency: JOBS, pollIntervalMs: 50 }, [Handlers]);
  });
  afterAll(() => app.close());
  afterEach(() => jest.restoreAllMocks());

  /** Progress UPDATEs the queue sends, while spied on. */
  function countProgressWrites(): { n: number } {
    const count = { n: 0 };
    const run = app.db.run.bind(app.db);
    jest.spyOn(app.db, 'run').mockImplementation((s) => {
      if (/SET progress =/.test(s.render(db.dialect).text)) count.n++;
      return run(s);
    });
    return count;
  }

  it(`${JOBS} jobs x ${CALLS} calls not awaited: a few writes per job, and each job ends on its last stage`, async () => {
    const writes = countProgressWrites();
    const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: JOBS }, (_, i) => ({ ref: `j${i}`, type: 'fire-and-forget' }))));
    for (const id of ids) expect((await app.queue.waitFor(id, { timeoutMs: 120_000 })).state).toBe('done');
    const rows = await app.rows(`SELECT current_stage FROM jobs WHERE type = 'fire-and-forget'`);
    expect(rows.map((r) => r.current_stage)).toEqual(ids.map(() => `item ${CALLS}`));
    // Before: one write per call, 20,000.
    expect(writes.n).toBeLessThanOrEqual(JOBS * 10);
    process.stdout.write(`[${db.dialect}] ${JOBS} x ${CALLS} progress calls: ${writes.n} writes\n`);
  }, 180_000);

  it(`${JOBS} jobs whose last progress call is not awaited: each ends on its last stage`, async () => {
    // Before: the job was finalized while its last write waited behind the first; the write,
    // now for a job no longer running, was refused: 1, 8 and 20 of 20 jobs ended on 'half' here
    // on PostgreSQL, MariaDB and SQLite.
    const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: JOBS }, (_, i) => ({ ref: `l${i}`, type: 'last-not-awaited' }))));
    for (const id of ids) expect((await app.queue.waitFor(id, { timeoutMs: 60_000 })).state).toBe('done');
    const rows = await app.rows(`SELECT current_stage FROM jobs WHERE type = 'last-not-awaited'`);
    expect(rows.map((r) => r.current_stage)).toEqual(ids.map(() => 'last'));
  }, 120_000);

  it(`${JOBS} jobs x ${CALLS} awaited calls: each written, the event loop turning meanwhile`, async () => {
    const writes = countProgressWrites();
    let longest = 0;
    const start = performance.now();
    let last = start;
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 10);
    try {
      const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: JOBS }, (_, i) => ({ ref: `a${i}`, type: 'awaited' }))));
      for (const id of ids) expect((await app.queue.waitFor(id, { timeoutMs: 120_000 })).state).toBe('done');
    } finally {
      clearInterval(timer);
    }
    const took = performance.now() - start;
    expect(writes.n).toBe(JOBS * CALLS);
    // Before, on SQLite: all of it without a turn of the event loop (0.74 of 0.76 s).
    expect(longest).toBeLessThan(took / 2);
  }, 180_000);
});

import { Injectable } from '@nestjs/common';
import { ClaimService, JobHandler, type JobContext } from '../../lib';
import { DEFERRED_ARGS_CHARS } from '../../lib/claim/claimed-job';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

const BIG = 'b'.repeat(DEFERRED_ARGS_CHARS);
const CLAIMED = 40;

/** Parses of strings at least as long as the deferred args, counted in this process. */
let largeParses = 0;
const parse = JSON.parse;

const ran = new Map<number, unknown>();

@Injectable()
class Handlers {
  @JobHandler('work')
  async work(args: { i: number; big?: string }, ctx: JobContext): Promise<{ i: number }> {
    ran.set(ctx.id, args);
    return { i: args.i };
  }
}

/**
 * A claim returns its jobs' args as text and the worker parsed them all in the claim's turn of
 * the event loop: 500 prefetched jobs of 1 MB args were 500 MB of JSON.parse at once (a 2.4 s
 * stall on PostgreSQL, with every lease renewal of the process behind it). Large args are now
 * parsed when the attempt reads them. And args that are not JSON (written around the queue)
 * threw in that loop, failing the whole claim: its jobs stayed leased until their leases
 * expired, then were claimed together again. Such a job now fails its own attempts.
 */
describeDialects('claimed args are parsed by their attempt', (db) => {
  let app: QueueApp;

  beforeAll(async () => {
    JSON.parse = function (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) {
      if (typeof text === 'string' && text.length >= DEFERRED_ARGS_CHARS) largeParses++;
      return parse.call(JSON, text, reviver);
    } as typeof JSON.parse;
    app = await startQueueApp(db, { worker: false, externalTypes: ['work'] });
  });
  afterAll(async () => {
    JSON.parse = parse;
    await app?.close();
  });
  beforeEach(async () => {
    await resetTables(app);
    ran.clear();
  });

  it('a claim of jobs with large args parses none of them; each job parses its own when read', async () => {
    const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: CLAIMED }, (_, i) => ({ ref: `j${i}`, type: 'work', args: { i, big: i % 2 ? BIG : 'small' } }))));
    const before = largeParses;
    const claimed = await app.module.get(ClaimService).claim({ owner: 'w', types: ['work'], quotas: [{ limit: CLAIMED }], leaseTtlMs: 30_000, start: true });
    expect(claimed.map((j) => j.id).sort((a, b) => a - b)).toEqual(ids.sort((a, b) => a - b));
    expect(largeParses).toBe(before);

    const byI = [...claimed].sort((a, b) => (a.args as { i: number }).i - (b.args as { i: number }).i);
    expect(largeParses).toBe(before + CLAIMED / 2);
    byI.forEach((j, i) => expect(j.args).toEqual({ i, big: i % 2 ? BIG : 'small' }));
    expect(largeParses).toBe(before + CLAIMED / 2); // once each
    // Read as any other field, and written over like one.
    expect(Object.keys(claimed[0])).toContain('args');
    claimed[1].args = { replaced: true };
    expect(claimed[1].args).toEqual({ replaced: true });
  });
});

/**
 * Args that are not JSON: on PostgreSQL the find index over `args::jsonb` refuses such a write,
 * so only MariaDB and SQLite can hold them.
 */
describeDialects(
  'claimed args that are not JSON',
  (db) => {
    let app: QueueApp;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['work'] });
    });
    afterAll(() => app?.close());

    it('args that are not JSON fail their own job; the rest of its claim run once', async () => {
      const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: 20 }, (_, i) => ({ ref: `j${i}`, type: 'work', args: { i, big: i === 7 ? BIG : 'small' }, maxAttempts: 2 }))));
      const [small, large] = [ids[3], ids[7]];
      await app.rows(`UPDATE jobs SET args = '{"i": 3, not json' WHERE id = ${small}`);
      await app.rows(`UPDATE jobs SET args = ${db.dialect === 'mysql' ? 'CONCAT' : ''}(${db.dialect === 'mysql' ? `'{"big": "', REPEAT('b', ${DEFERRED_ARGS_CHARS}), '"'` : `'{"big": "' || '${BIG}' || '"'`}) WHERE id = ${large}`);
      const worker = await startQueueApp(db, { concurrency: 4, prefetch: 20, pollIntervalMs: 100, leaseTtlMs: 30_000, runMigrations: false }, [Handlers]);
      try {
        // The two bad ones are watched through their rows (state, attempts, last error).
        const good = await Promise.all(ids.filter((id) => id !== small && id !== large).map((id) => worker.queue.waitFor(id, { timeoutMs: 20_000 })));
        expect(good.map((j) => [j.state, j.attempts])).toEqual(good.map(() => ['done', 1]));
        const bad = async () => app.rows(`SELECT id, state, attempts, last_error FROM jobs WHERE id IN (${small}, ${large}) ORDER BY id`);
        for (const until = Date.now() + 20_000; (await bad()).some((r) => r.state !== 'failed') && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
        const rows = await bad();
        expect(rows.map((r) => [Number(r.id), r.state, Number(r.attempts)])).toEqual([
          [small, 'failed', 2],
          [large, 'failed', 2],
        ]);
        for (const r of rows) expect(String(r.last_error)).toMatch(/SyntaxError|JSON/);
        expect(ran.size).toBe(18);
      } finally {
        await worker.close();
      }
    });

    it('views give args and results that are not JSON as their stored text: get, waitFor and find pages go on', async () => {
      await app.rows(`DELETE FROM jobs`);
      const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: 5 }, (_, i) => ({ ref: `v${i}`, type: 'work', args: { i } }))));
      const bad = ids[2];
      await app.rows(`UPDATE jobs SET args = '{"i": 2, not json', state = 'failed', result = 'half a result {', finished_at = updated_at WHERE id = ${bad}`);
      // Before: each of these threw a SyntaxError, the find page for the other four jobs too.
      const view = await app.queue.get(bad);
      expect([view?.args, view?.result]).toEqual(['{"i": 2, not json', 'half a result {']);
      expect((await app.queue.waitFor(bad, { timeoutMs: 5_000 })).args).toBe('{"i": 2, not json');
      const page = await app.queue.find({ type: 'work' }, { limit: 10 });
      expect(page.jobs.map((j) => j.id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
      expect(page.jobs.filter((j) => j.id !== bad).map((j) => j.args)).toEqual(expect.arrayContaining([{ i: 0 }, { i: 1 }, { i: 3 }, { i: 4 }]));
    });
  },
  ['mysql', 'sqlite'],
);

import { jest } from '@jest/globals';
import { JobWaiters, type GraphNode } from '../../lib';
import type { SqlResult } from '../../lib/database/sql-executor';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';

const JOBS = 300;
const ARGS_CHARS = 256 * 1024;

/**
 * Waiters whose jobs settle together resolve from one read of their rows. That read took every
 * settled id of a poll chunk (up to 10,000) at once, args and results whole: 300 jobs of 256 KB
 * args were one 75 MB read, and 10,000 jobs of 1 MB results 10 GB, past the heap limit. Now the
 * rows are read a few MB at a time, by the sizes the poll read beside their states.
 */
describeDialects('waiters: settled rows read a few MB at a time', (db) => {
  it(`${JOBS} waiters on jobs with 256 KB args cancelled together by another process: reads of at most ~8 MB`, async () => {
    // PostgreSQL hears of the cancel by notification, the others by the poll: both paths are bounded.
    const opts = { worker: false, externalTypes: ['wr-big'], maxArgsBytes: 2 * ARGS_CHARS, pollIntervalMs: 100 };
    const app = await startQueueApp(db, opts);
    const other = await startQueueApp(db, opts);
    try {
      const executor = (app.module.get(JobWaiters) as unknown as { connection: { db: { run(s: unknown): Promise<SqlResult> } } }).connection.db;
      const run = executor.run.bind(executor);
      const perRead: number[] = [];
      jest.spyOn(executor, 'run').mockImplementation(async (statement) => {
        const out = await run(statement);
        let chars = 0;
        for (const row of out.rows) for (const c of ['args', 'result']) if (typeof row[c] === 'string') chars += (row[c] as string).length;
        if (chars) perRead.push(chars);
        return out;
      });
      const pad = 'x'.repeat(ARGS_CHARS);
      const ids: number[] = [];
      for (let i = 0; i < JOBS; i += 50) {
        const nodes: GraphNode[] = Array.from({ length: 50 }, (_, k) => ({ ref: `j${k}`, type: 'wr-big', args: { pad, n: i + k } }));
        const out = await app.queue.enqueueGraph(nodes);
        for (const n of nodes) ids.push(out[n.ref]);
      }
      const waiting = Promise.all(ids.map((id) => app.queue.waitFor(id, { timeoutMs: 60_000 })));
      await new Promise((r) => setTimeout(r, 300)); // their first lookup has answered (all queued)
      perRead.length = 0;
      expect(await other.queue.cancelMany({ type: 'wr-big' })).toEqual({ count: JOBS });
      const views = await waiting;
      views.forEach((v, i) => expect(v).toMatchObject({ id: ids[i], state: 'cancelled', args: { n: i } }));
      expect(views.every((v) => (v.args as { pad: string }).pad.length === ARGS_CHARS)).toBe(true);
      const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
      process.stdout.write(`[${db.dialect}] ${JOBS} waiters of 256 KB jobs: ${perRead.length} reads, largest ${mb(Math.max(...perRead))} MB, total ${mb(perRead.reduce((a, b) => a + b, 0))} MB\n`);
      // 8 MB of 256 KB rows is 32 of them (a read may go one row past); before, one read took all 300 (75 MB).
      expect(Math.max(...perRead)).toBeLessThanOrEqual(8 * 1024 * 1024 + ARGS_CHARS + 1024);
      expect(perRead.reduce((a, b) => a + b, 0)).toBeLessThan(JOBS * (ARGS_CHARS + 1024) * 1.2); // each row read about once

      // Waiters on jobs already settled: their first lookup reads the sizes, the rows follow in slices.
      perRead.length = 0;
      const again = await Promise.all(ids.map((id) => app.queue.waitFor(id)));
      expect(again.map((v) => v.id)).toEqual(ids);
      expect(Math.max(...perRead)).toBeLessThanOrEqual(8 * 1024 * 1024 + ARGS_CHARS + 1024);
      expect(perRead.reduce((a, b) => a + b, 0)).toBeLessThan(JOBS * (ARGS_CHARS + 1024) * 1.2);
    } finally {
      await other.close();
      await app.close();
    }
  }, 120_000);
});

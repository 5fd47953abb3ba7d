import { Injectable } from '@nestjs/common';
import { ClaimService, JobHandler } from '../../lib';
import { SQLITE_CLAIM_BYTES, UNSIZED_UP_TO } from '../../lib/claim/sqlite.claim';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

const MB = 'm'.repeat(1024 * 1024 - 100); // within the default maxArgsBytes with its JSON around it
const JOBS = 40;

let ran = 0;

@Injectable()
class Handlers {
  @JobHandler('big')
  async big(args: { i: number; blob: string }): Promise<{ i: number; length: number }> {
    ran++;
    return { i: args.i, length: args.blob.length };
  }
}

/**
 * A SQLite claim rewrites every row it leases whole, args included, and returns the args, in one
 * turn of the event loop under the database's only write lock: 500 prefetched jobs of 1 MB args
 * held both for 13 s (75 s before migration 19 and lazily parsed args). A claim larger than
 * UNSIZED_UP_TO now stops at SQLITE_CLAIM_BYTES of args, at least one job, and the worker claims
 * the rest as it goes.
 */
describeDialects(
  'SQLite claims stop at a byte budget of args',
  (db) => {
    let app: QueueApp;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['big'] });
    });
    afterAll(() => app?.close());
    beforeEach(() => resetTables(app));

    it('a claim of 40 jobs with 1 MB args leases about 16 MB of them; the next claims the rest, each once', async () => {
      const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: JOBS }, (_, i) => ({ ref: `j${i}`, type: 'big', args: { i, blob: MB } }))));
      expect(JOBS).toBeGreaterThan(UNSIZED_UP_TO);
      const claims = app.module.get(ClaimService);
      const taken: number[][] = [];
      for (let round = 0; round < JOBS; round++) {
        const claimed = await claims.claim({ owner: 'w', types: ['big'], quotas: [{ limit: JOBS }], leaseTtlMs: 60_000, start: true });
        if (!claimed.length) break;
        const bytes = claimed.reduce((n, j) => n + JSON.stringify(j.args).length, 0);
        // Within the budget plus the one job that may cross it, and never nothing.
        expect(bytes - JSON.stringify(claimed[claimed.length - 1].args).length).toBeLessThan(SQLITE_CLAIM_BYTES);
        taken.push(claimed.map((j) => j.id));
      }
      expect(taken.length).toBeGreaterThanOrEqual(3);
      expect(taken.flat().sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
      expect(taken.flat().length).toBe(new Set(taken.flat()).size);
    });

    it('small args still go out in one claim of the whole quota', async () => {
      await app.queue.enqueueGraph(Array.from({ length: 500 }, (_, i) => ({ ref: `j${i}`, type: 'big', args: { i, blob: 'x' } })));
      const claimed = await app.module.get(ClaimService).claim({ owner: 'w', types: ['big'], quotas: [{ limit: 500 }], leaseTtlMs: 60_000, start: true });
      expect(claimed).toHaveLength(500);
    });

    it('a worker with prefetch 500 runs them all, each once', async () => {
      const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: JOBS }, (_, i) => ({ ref: `j${i}`, type: 'big', args: { i, blob: MB } }))));
      ran = 0;
      const worker = await startQueueApp(db, { concurrency: 10, prefetch: 500, pollIntervalMs: 200, runMigrations: false }, [Handlers]);
      try {
        const settled = await Promise.all(ids.map((id) => worker.queue.waitFor<unknown, { length: number }>(id, { timeoutMs: 60_000 })));
        expect(settled.map((j) => [j.state, j.attempts, j.result?.length])).toEqual(settled.map(() => ['done', 1, MB.length]));
        expect(ran).toBe(JOBS);
      } finally {
        await worker.close();
      }
    }, 90_000);
  },
  ['sqlite'],
);

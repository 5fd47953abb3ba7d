import { Injectable } from '@nestjs/common';
import { DatabaseConnectionError, JobHandler, type JobContext, type JobQueueModuleOptions } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { TcpProxy } from '../support/tcp-proxy';
import { eventually } from '../support/wait';

const JOBS = 300;
const QUERY_TIMEOUT_MS = 1_000;
const CONCURRENCY = 4;
/** Jobs a worker may hold at once (prefetch defaults to concurrency): more done means claims went on. */
const HELD = 2 * CONCURRENCY;

const finished: number[] = [];

@Injectable()
class Steady {
  @JobHandler('steady')
  async run(args: { ms: number }, ctx: JobContext): Promise<void> {
    await new Promise((r) => setTimeout(r, args.ms));
    finished.push(ctx.id);
  }
}

/**
 * A connection whose server is gone (a failover, a dropped route) answers nothing, and TCP gives
 * up on it only after minutes, or never when nothing is sent. A worker whose claim or renewal
 * was in flight on one waited for it that long: no claim, no finalize, its jobs reclaimed by
 * others or by nobody. Now a statement not answered within `queryTimeoutMs` is given up with
 * its connection, and the pool opens a new one to the server that answers.
 */
describeDialects(
  'connections left half-open (their server gone, a new one reachable)',
  (db) => {
    let proxy: TcpProxy;
    let worker: QueueApp | undefined;
    let direct: QueueApp;

    beforeAll(async () => {
      direct = await startQueueApp(db, { worker: false, externalTypes: ['steady'] });
    });
    afterAll(() => direct?.close());
    beforeEach(async () => {
      finished.length = 0;
      await direct.rows('DELETE FROM jobs');
      proxy = new TcpProxy('127.0.0.1', Number(new URL(db.location).port));
      await proxy.start();
    });
    afterEach(async () => {
      await worker?.close();
      worker = undefined;
      await proxy.stop();
    });

    /**
     * A busy worker on the proxy; once it has finished some jobs, every connection it has goes
     * silent (claims, renewals, finalizes and sweeps in flight on some of them), and the next
     * `unansweredNew` connections it opens reach no server either. Returns how long it took to
     * finish more jobs than it held, after all of them are done.
     */
    async function strandBusyWorker(unansweredNew: number, options: Partial<JobQueueModuleOptions> = {}): Promise<number> {
      worker = await startQueueApp(
        db,
        { url: proxy.url(db.location), concurrency: CONCURRENCY, pollIntervalMs: 50, leaseTtlMs: 4_000, reclaimIntervalMs: 500, shutdownGraceMs: 500, queryTimeoutMs: QUERY_TIMEOUT_MS, ...options },
        [Steady],
      );
      await direct.queue.enqueueGraph(Array.from({ length: JOBS }, (_, i) => ({ ref: `j${i}`, type: 'steady', args: { ms: 10 + (i % 5) * 10 } })));
      await eventually('the first jobs done', async () => finished.length >= 20, 30_000, 20);
      proxy.strandNew(unansweredNew);
      proxy.strand();
      const stranded = Date.now();
      const before = await direct.count(`state = 'done'`);
      // It waited for them for good; now each costs it QUERY_TIMEOUT_MS once.
      await eventually('jobs claimed after the strand done', async () => (await direct.count(`state = 'done'`)) > before + HELD + 10, 20 * QUERY_TIMEOUT_MS, 20);
      const resumedMs = Date.now() - stranded;
      await eventually(`all ${JOBS} jobs done`, async () => (await direct.count(`state = 'done'`)) === JOBS, 60_000, 100);
      expect(await direct.count(`state <> 'done'`)).toBe(0);
      return resumedMs;
    }

    it(`a worker gives up statements unanswered after queryTimeoutMs and goes on claiming and finishing (${JOBS} jobs)`, async () => {
      const resumedMs = await strandBusyWorker(0);
      process.stdout.write(`[${db.dialect}] connections stranded: ${HELD + 10} more jobs done ${resumedMs} ms later (queryTimeoutMs ${QUERY_TIMEOUT_MS}); all ${JOBS} done\n`);
      expect(resumedMs).toBeLessThan(20 * QUERY_TIMEOUT_MS);
    }, 120_000);

    it(`a connection whose server never answers its handshake is given up after queryTimeoutMs too (${JOBS} jobs)`, async () => {
      // The pool replaces the stranded connections with new ones; the first of those reach no
      // server either (a balancer in front of one that is gone). Waited for, each one held its
      // caller (a claim, a finalize, a renewal) and its pool slot for good.
      const POOL = 4;
      const resumedMs = await strandBusyWorker(POOL, { poolSize: POOL });
      process.stdout.write(`[${db.dialect}] connections stranded, the next ${POOL} unanswered: ${HELD + 10} more jobs done ${resumedMs} ms later; all ${JOBS} done\n`);
      expect(resumedMs).toBeLessThan(20 * QUERY_TIMEOUT_MS);
    }, 120_000);

    it('start-up against a server that never answers fails after queryTimeoutMs instead of waiting for good', async () => {
      proxy.strandNew(1_000);
      const at = Date.now();
      // Over the drivers' own errors (pg's "timeout expired", mysql2's "connect ETIMEDOUT"), kept as cause.
      const failed = await startQueueApp(db, { url: proxy.url(db.location), queryTimeoutMs: QUERY_TIMEOUT_MS }, [Steady]).then(() => undefined, (err: unknown) => err);
      expect(failed).toBeInstanceOf(DatabaseConnectionError);
      expect((failed as Error).message).toMatch(new RegExp(`^Could not connect to .*: (timeout expired|connect ETIMEDOUT) \\(no answer within ${QUERY_TIMEOUT_MS} ms: queryTimeoutMs`));
      expect(((failed as Error).cause as Error).message).toMatch(/^(timeout expired|connect ETIMEDOUT)$/);
      const failedMs = Date.now() - at;
      process.stdout.write(`[${db.dialect}] start-up against a silent server: failed after ${failedMs} ms (queryTimeoutMs ${QUERY_TIMEOUT_MS})\n`);
      expect(failedMs).toBeLessThan(10 * QUERY_TIMEOUT_MS);
    }, 60_000);

    it('without a deadline (queryTimeoutMs: 0) the same worker is still waiting', async () => {
      // The proof that the stall above is real on this driver, and what 0 means.
      worker = await startQueueApp(db, { url: proxy.url(db.location), concurrency: CONCURRENCY, pollIntervalMs: 50, leaseTtlMs: 4_000, shutdownGraceMs: 500, queryTimeoutMs: 0 }, [Steady]);
      await direct.queue.enqueueGraph(Array.from({ length: 100 }, (_, i) => ({ ref: `j${i}`, type: 'steady', args: { ms: 10 } })));
      await eventually('the first jobs done', async () => finished.length >= 20, 30_000, 20);
      const before = await direct.count(`state = 'done'`);
      proxy.strand();
      await new Promise((r) => setTimeout(r, 5 * QUERY_TIMEOUT_MS));
      // At most the jobs it held may still finish (a finalize on a connection opened since).
      expect(await direct.count(`state = 'done'`)).toBeLessThanOrEqual(before + HELD);
      // Its sockets are destroyed at close, past the shutdown's bound for a silent database.
    }, 120_000);
  },
  ['postgres', 'mysql'],
);

/**
 * The LISTEN connection is idle, so on a half-open one nothing failed: wake-ups were lost for
 * good and every job waited for the next poll. It is now pinged, and reconnected when the ping
 * gets no answer within queryTimeoutMs.
 */
describeDialects(
  'a half-open LISTEN connection',
  (db) => {
    const POLL_MS = 20_000;
    let proxy: TcpProxy;
    let direct: QueueApp;
    let worker: QueueApp | undefined;
    beforeAll(async () => {
      direct = await startQueueApp(db, { worker: false, externalTypes: ['steady'] });
      proxy = new TcpProxy('127.0.0.1', Number(new URL(db.location).port));
      await proxy.start();
    });
    afterAll(async () => {
      await worker?.close();
      await direct?.close();
      await proxy?.stop();
    });

    it(`is given up and opened again: wake-ups come back (polling every ${POLL_MS / 1_000} s meanwhile)`, async () => {
      finished.length = 0;
      await direct.rows('DELETE FROM jobs');
      worker = await startQueueApp(db, { url: proxy.url(db.location), pollIntervalMs: POLL_MS, shutdownGraceMs: 500, queryTimeoutMs: QUERY_TIMEOUT_MS }, [Steady]);
      const startsWithin = async (what: string, ms: number) => {
        const { id } = await direct.queue.enqueue({ type: 'steady', args: { ms: 1 } });
        const at = Date.now();
        await eventually(what, async () => finished.includes(id), ms, 10);
        return Date.now() - at;
      };
      const before = await startsWithin('a job woken by NOTIFY', 5_000);

      proxy.strand();
      // The ping (every queryTimeoutMs) goes unanswered for queryTimeoutMs, then the listener
      // reconnects after its first back-off; the claims that were in flight recover as above.
      await new Promise((r) => setTimeout(r, 4 * QUERY_TIMEOUT_MS));
      const after = await startsWithin('a job woken by NOTIFY on the new LISTEN connection', 5_000);
      process.stdout.write(`[${db.dialect}] half-open LISTEN: a job finished ${before} ms after enqueue before, ${after} ms after the reconnect (poll ${POLL_MS} ms)\n`);
      expect(after).toBeLessThan(POLL_MS / 4);
    }, 120_000);
  },
  ['postgres'],
);

import { jest } from '@jest/globals';
import { Injectable, Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Registry } from 'prom-client';
import { JobContext, JobHandler, JobQueueModule, JobQueueService } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { JobQueueHealthIndicator, JobQueueHealthModule } from 'nestjs-sql-job-queue/health';
import { JobQueueMetricsModule } from 'nestjs-sql-job-queue/metrics';
import { MIN_DATABASE_WAIT_MS } from '../../lib/scheduler/shutdown-deadline';
import { describeDialects } from '../support/describe-dialects';
import { TcpProxy } from '../support/tcp-proxy';
import { eventually } from '../support/wait';

/** Prometheus' default scrape_timeout: a scrape slower than this fails, counters and all. */
const SCRAPE_TIMEOUT_MS = 10_000;

function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  if (!line) throw new Error(`no sample ${series} in:\n${text}`);
  return Number(line.slice(series.length + 1));
}

/** Resolves with what `work` gives, or with `'no answer'` after `ms`. */
function within<T>(work: Promise<T>, ms: number): Promise<T | 'no answer'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work, new Promise<'no answer'>((r) => (timer = setTimeout(() => r('no answer'), ms)))]).finally(() => clearTimeout(timer));
}

describeDialects(
  'a database server that stops answering (connections open, no reply)',
  (db) => {
    let proxy: TcpProxy;
    let moduleRef: TestingModule;
    const registry = new Registry();

    beforeAll(async () => {
      proxy = new TcpProxy('127.0.0.1', Number(new URL(db.location).port));
      await proxy.start();
      moduleRef = await Test.createTestingModule({
        imports: [
          TerminusModule,
          JobQueueModule.forRoot(db.options({ url: proxy.url(db.location), worker: false, externalTypes: ['elsewhere'] })),
          JobQueueMetricsModule.forRoot({ registry, cacheMs: 100 }),
          JobQueueHealthModule,
        ],
      }).compile();
      await moduleRef.init();
    });
    afterAll(async () => {
      proxy?.thaw();
      await moduleRef?.close();
      await proxy?.stop();
    });

    it('a scrape answers in time with the last gauge values, health says down in time with one read in flight, and both recover', async () => {
      const queue = moduleRef.get(JobQueueService);
      const health = moduleRef.get(JobQueueHealthIndicator);
      for (let i = 0; i < 3; i++) await queue.enqueue({ type: 'elsewhere' });
      expect(sample(await registry.metrics(), 'job_queue_jobs{state="ready"}')).toBe(3);
      await new Promise((r) => setTimeout(r, 150)); // past cacheMs: the next scrape reads again

      proxy.freeze();
      const reads = jest.spyOn(moduleRef.get(JobQueueDatabase), 'run');
      try {
        const started = Date.now();
        const text = await within(registry.metrics(), SCRAPE_TIMEOUT_MS * 2);
        const elapsed = Date.now() - started;
        // It hung until the database answered: Prometheus gave up at 10 s and lost the counters too.
        expect(text).not.toBe('no answer');
        expect(elapsed).toBeLessThan(SCRAPE_TIMEOUT_MS);
        expect(sample(text as string, 'job_queue_jobs{state="ready"}')).toBe(3);
        const metricReads = reads.mock.calls.length;
        // The gauges' reads, still hanging: the oldest ready age, and the open states, the finished
        // states and the failing schedules when due.
        const GAUGE_READS = 4;
        expect(metricReads).toBeLessThanOrEqual(GAUGE_READS);

        for (let i = 0; i < 10; i++) {
          const t0 = Date.now();
          const result = await health.isHealthy('jobQueue', { timeoutMs: 300 });
          expect(result.jobQueue).toMatchObject({ status: 'down', message: 'database unreachable: no answer within 300 ms' });
          expect(Date.now() - t0).toBeLessThan(5_000);
        }
        // Ten checks, one read and one ping (asked when the read is slow, to tell a slow read from a
        // silent server): each check used to start its own read, each holding a pooled connection
        // until the server answered.
        expect(reads.mock.calls.length - metricReads).toBe(2);
        const scrapedAgain = await within(registry.metrics(), SCRAPE_TIMEOUT_MS * 2);
        expect(scrapedAgain).not.toBe('no answer');
        // The health checks' one read and one ping; and the gauges' four reads are paced apart
        // (kept 20, 20, 100 and 20 times as long as they took), so they may have come due since the
        // first frozen scrape: at most one more read each, then none.
        const sinceFirst = reads.mock.calls.length - metricReads;
        expect(sinceFirst).toBeLessThanOrEqual(2 + GAUGE_READS - metricReads);
        // However long the server stays silent, reads do not pile up: one per gauge (the oldest
        // ready age, the open states, the finished states, the failing schedules) and the health checks' read and ping. Which of
        // the paced counts has come due by a given scrape depends on the machine's speed (CI
        // once saw the finished states come due between the last two scrapes).
        for (let i = 0; i < 3; i++) {
          expect(await within(registry.metrics(), SCRAPE_TIMEOUT_MS * 2)).not.toBe('no answer');
          await new Promise((r) => setTimeout(r, 200));
        }
        expect(reads.mock.calls.length).toBeLessThanOrEqual(GAUGE_READS + 2);
      } finally {
        reads.mockRestore();
        proxy.thaw();
      }

      for (const deadline = Date.now() + 30_000; ; ) {
        const result = await health.isHealthy('jobQueue', { timeoutMs: 2_000 });
        if (result.jobQueue.status === 'up') break;
        if (Date.now() > deadline) throw new Error(`health did not recover: ${JSON.stringify(result)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      await queue.enqueue({ type: 'elsewhere' });
      for (const deadline = Date.now() + 30_000; ; ) {
        if (sample(await registry.metrics(), 'job_queue_jobs{state="ready"}') === 4) break;
        if (Date.now() > deadline) throw new Error('the gauges did not recover');
        await new Promise((r) => setTimeout(r, 150));
      }
    }, 120_000);

    it('app.close() rejects a pending waitFor with WaitForShutdownError after shutdownGraceMs, though the poll it made never answers', async () => {
      // Without LISTEN (MySQL's only way, PostgreSQL's with listenNotify: false) the poll is in flight.
      const app = await Test.createTestingModule({
        imports: [
          JobQueueModule.forRoot(
            db.options({ url: proxy.url(db.location), worker: false, externalTypes: ['elsewhere'], pollIntervalMs: 50, listenNotify: false, shutdownGraceMs: 500 }),
          ),
        ],
      }).compile();
      await app.init();
      const queue = app.get(JobQueueService);
      const job = await queue.enqueue({ type: 'elsewhere' });
      const waiting = queue.waitFor(job.id).then(
        () => 'resolved',
        (err: Error) => err.name,
      );
      await new Promise((r) => setTimeout(r, 200)); // its first lookup has answered
      proxy.freeze();
      let closing: Promise<void> | undefined;
      try {
        await new Promise((r) => setTimeout(r, 200)); // a poll is now waiting for the server
        closing = app.close();
        // It waited for that poll, and app.close() with it, until the server answered.
        expect(await within(waiting, 10_000)).toBe('WaitForShutdownError');
      } finally {
        proxy.thaw();
        await (closing ?? app.close());
      }
    }, 60_000);

    it('app.close() of a busy worker ends within its bound though the server never answers, its connections closed', async () => {
      const GRACE_MS = 500;
      const ran: number[] = [];
      @Injectable()
      class Sleepy {
        @JobHandler('sleepy')
        async run(args: { ms: number }, ctx: JobContext): Promise<void> {
          ran.push(ctx.id);
          await new Promise((r) => setTimeout(r, args.ms));
        }
      }
      const own = new TcpProxy('127.0.0.1', Number(new URL(db.location).port));
      await own.start();
      const errors = jest.spyOn(Logger.prototype, 'error');
      const warns = jest.spyOn(Logger.prototype, 'warn');
      const app = await Test.createTestingModule({
        imports: [JobQueueModule.forRoot(db.options({ url: own.url(db.location), concurrency: 4, pollIntervalMs: 50, shutdownGraceMs: GRACE_MS, leaseTtlMs: 3_000 }))],
        providers: [Sleepy],
      }).compile();
      await app.init();
      let closing: Promise<unknown> | undefined;
      try {
        const queue = app.get(JobQueueService);
        // Jobs finishing all the time: claims, finalizes and heartbeats are in flight when the server stops.
        for (let i = 0; i < 40; i++) await queue.enqueue({ type: 'sleepy', args: { ms: 20 + (i % 4) * 40 } });
        for (const deadline = Date.now() + 20_000; ran.length < 8; ) {
          if (Date.now() > deadline) throw new Error('the worker did not start jobs');
          await new Promise((r) => setTimeout(r, 20));
        }
        own.freeze();
        // Statements now wait for a server that does not answer, a recurring tick (every 1 s in a
        // worker) among them: the shutdown waited for it forever (CI, MariaDB).
        await new Promise((r) => setTimeout(r, 1_200));
        const started = Date.now();
        closing = app.close().then(() => Date.now() - started, (err: Error) => err.message);
        // The bound: the jobs' grace, then as long again (at least 2 s) for the database, then a
        // moment (1 s) for the pools to notice their closed sockets; 1 s more for a loaded machine.
        const bound = GRACE_MS + Math.max(GRACE_MS, MIN_DATABASE_WAIT_MS) + 1_000 + 1_000;
        const took = await within(closing, bound + 10_000);
        expect(typeof took === 'number' && took <= bound ? 'in time' : took).toBe('in time');
        // The client side of every connection is closed. The proxy hears of a destroyed socket in
        // a later turn of the event loop than the pool does, and close() may return in between
        // (seen once in CI, MariaDB: 1 open); a connection left open would stay so, the server
        // being silent, so a short wait hides nothing.
        await eventually('every proxied connection closed by the client', async () => own.openConnections === 0, 500, 10).catch(() => undefined);
        expect(own.openConnections).toBe(0);
        // Nothing of it touches the database once close() returned: no batch of results started
        // on a pool being closed (an error and its stack each), no new connection.
        const accepted = own.accepted;
        own.thaw();
        await new Promise((r) => setTimeout(r, 1_000));
        expect(own.accepted).toBe(accepted);
        expect(errors.mock.calls.map((c) => c[0])).toEqual([]);
        const lines = warns.mock.calls.map((c) => String(c[0]));
        expect(lines.filter((l) => l.startsWith('shutdown: the database did not answer in time'))).toHaveLength(1);
        // One warning per read that failed, not one per timer tick that waited for it.
        expect(lines.filter((l) => l.startsWith('could not read paused types and groups')).length).toBeLessThanOrEqual(2);
        const unwritten = lines.filter((l) => /^shutdown: \d+ result\(s\) not written/.test(l));
        process.stdout.write(`[${db.dialect}] busy worker closed in ${took} ms (bound ${bound}); ${unwritten.join(', ') || 'no result unwritten'}\n`);
      } finally {
        errors.mockRestore();
        warns.mockRestore();
        own.thaw();
        await closing;
        await own.stop();
      }
    }, 60_000);
  },
  ['postgres', 'mysql'],
);

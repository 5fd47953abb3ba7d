import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource as TypeOrmDataSource, type DataSource, type DataSourceOptions } from 'typeorm';
import { EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { InvalidJobEventListenerError, JOB_QUEUE_DATA_SOURCE, JobContext, JobEventEmitterMissingError, JobHandler, JobLifecycle, JobQueueModule, JobQueueService, OnJobEvent, type GraphNode, type JobEventDetail, type JobView } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

interface Heard {
  pid: number;
  event: string;
  id: number;
  attempt: number | null;
  error: string | null;
  /** detail.at: when the committing process reported the change. */
  at: number;
  state?: string;
}

/** The test process's own listener (it enqueues, so it hears `enqueued`; it never runs jobs). */
@Injectable()
class MainRecorder {
  static heard: Heard[] = [];
  private record(job: JobView, d: JobEventDetail): void {
    MainRecorder.heard.push({ pid: process.pid, event: d.event, id: job.id, attempt: d.attempt ?? null, error: d.error ?? null, at: d.at.getTime(), state: job.state });
  }
  @OnJobEvent('enqueued') enqueued(job: JobView, d: JobEventDetail) { this.record(job, d); }
  @OnJobEvent('cancelled') cancelled(job: JobView, d: JobEventDetail) { this.record(job, d); }
}

/** Handlers and a `completed` listener in the test process itself, for the view the finalize returns. */
@Injectable()
class CompletedViews {
  static heard: JobView[] = [];
  static attempts = 0;
  @JobHandler('ev-view')
  async view(args: { n: number }, ctx: JobContext): Promise<{ n: number; doubled: number }> {
    await ctx.progress(50, 'half');
    return { n: args.n, doubled: args.n * 2 };
  }
  @JobHandler('ev-view-retry', { maxAttempts: 2 })
  async retry(): Promise<string> {
    if (++CompletedViews.attempts === 1) throw new Error('first attempt fails');
    return 'second';
  }
  @OnJobEvent('completed') completed(job: JobView) { CompletedViews.heard.push(job); }
}

const TYPES = ['ev-ok', 'ev-flaky', 'ev-bad'];
const RANK: Record<string, number> = { enqueued: 0, started: 1, progress: 2, retrying: 3, completed: 3, failed: 3, cancelled: 3 };

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describeDialects('@OnJobEvent lifecycle events', (db) => {
  it('fire once each, in order per job, after commit, in the process that committed each change, across 2 workers', async () => {
    MainRecorder.heard = [];
    const app = await startQueueApp(db, { worker: false, externalTypes: TYPES, pollIntervalMs: 100 }, [MainRecorder]);
    const workerOptions = { ...db.options(), concurrency: 4, pollIntervalMs: 50, retryBackoff: { baseMs: 50, maxMs: 100 } };
    const workers = [new WorkerProcess('events.worker', workerOptions), new WorkerProcess('events.worker', workerOptions)];
    try {
      await resetTables(app);
      await Promise.all(workers.map((w) => w.waitFor('ready')));
      const nodes: GraphNode[] = [
        ...Array.from({ length: 12 }, (_, i) => ({ ref: `ok${i}`, type: 'ev-ok' })),
        ...Array.from({ length: 4 }, (_, i) => ({ ref: `flaky${i}`, type: 'ev-flaky' })),
        ...Array.from({ length: 3 }, (_, i) => ({ ref: `bad${i}`, type: 'ev-bad', maxAttempts: 2 })),
        { ref: 'after-bad', type: 'ev-ok', dependsOn: ['bad0'] }, // cancelled by the worker that fails bad0
      ];
      const ids = await app.queue.enqueueGraph(nodes);
      const single = await app.queue.enqueue({ type: 'ev-ok' });
      const all = [...Object.values(ids), single.id];
      const final = await Promise.all(all.map((id) => app.queue.waitFor(id, { timeoutMs: 60_000 })));

      const expected: Record<string, string[]> = {
        'ev-ok': ['enqueued', 'started', 'progress', 'completed'],
        'ev-flaky': ['enqueued', 'started', 'retrying', 'started', 'completed'],
        'ev-bad': ['enqueued', 'started', 'retrying', 'started', 'failed'],
        cancelled: ['enqueued', 'cancelled'],
      };
      const kindOf = (id: number) => (id === ids['after-bad'] ? 'cancelled' : final.find((j) => j.id === id)!.type);
      const total = all.reduce((n, id) => n + expected[kindOf(id)].length, 0);
      const heard = (): Heard[] => [
        ...MainRecorder.heard,
        ...workers.flatMap((w) => w.messages.filter((m) => m.type === 'event').map((m) => ({ ...(m as unknown as Heard), at: Number(m.at) }))),
      ];
      await until(() => heard().length >= total, 30_000, `${total} events`);
      await sleep(300); // anything extra (a duplicate) would arrive by now
      const events = heard();
      if (events.length !== total) {
        const byId = new Map<number, string[]>();
        for (const e of events) byId.set(e.id, [...(byId.get(e.id) ?? []), `${e.event}@${e.attempt}:${e.pid}`]);
        console.log(JSON.stringify([...byId].filter(([id]) => byId.get(id)!.length !== expected[kindOf(id)].length)));
      }
      expect(events.length).toBe(total);

      // The throwing listener on `completed` changed nothing: every ok job is done.
      expect(final.filter((j) => j.type === 'ev-ok' && j.id !== ids['after-bad']).every((j) => j.state === 'done')).toBe(true);
      expect(final.find((j) => j.id === ids['after-bad'])!.state).toBe('cancelled');

      const workerPids = new Set(workers.map((w) => w.pid));
      for (const id of all) {
        const mine = events.filter((e) => e.id === id).sort((a, b) => a.at - b.at || (a.attempt ?? 0) - (b.attempt ?? 0) || RANK[a.event] - RANK[b.event]);
        expect({ id, seq: mine.map((e) => e.event) }).toEqual({ id, seq: expected[kindOf(id)] });
        // enqueued by this process; everything else by the worker that committed it.
        expect(mine[0].pid).toBe(process.pid);
        for (const e of mine.slice(1)) expect(workerPids.has(e.pid)).toBe(true);
        // An attempt's started and its outcome come from the same worker (the one that ran it).
        for (const e of mine.filter((x) => ['completed', 'retrying', 'failed', 'progress'].includes(x.event))) {
          const start = mine.find((s) => s.event === 'started' && s.attempt === e.attempt)!;
          expect(e.pid).toBe(start.pid);
        }
        // The cascade cancel was committed by the worker that failed its upstream.
        if (id === ids['after-bad']) {
          const bad0Failed = events.find((e) => e.id === ids.bad0 && e.event === 'failed')!;
          expect(mine[1].pid).toBe(bad0Failed.pid);
        }
      }
      const failures = events.filter((e) => e.event === 'failed');
      expect(failures.length).toBe(3);
      for (const f of failures) expect(f.error).toMatch(/always fails/);
      // Work was shared: both workers reported starts.
      expect(new Set(events.filter((e) => e.event === 'started').map((e) => e.pid)).size).toBe(2);
      // The worker logged the throwing listener.
      const logged = /listener EventRecorder\.explode threw for job \d+: listener failure that must change nothing/;
      const stderr = () => workers.flatMap((w) => w.stderr).join('\n');
      await until(() => logged.test(stderr()), 10_000, 'the throwing listener to be logged').catch(() => undefined);
      expect(stderr()).toMatch(logged);
    } finally {
      for (const w of workers) w.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));
      await app.close();
    }
  }, 120_000);

  it('an enqueue inside the app transaction emits only after its commit, and nothing if it rolls back', async () => {
    MainRecorder.heard = [];
    const app = await startQueueApp(db, { worker: false, externalTypes: TYPES }, [MainRecorder]);
    try {
      await resetTables(app);
      const ds = app.module.get<DataSource>(JOB_QUEUE_DATA_SOURCE);
      await expect(
        ds.transaction(async (manager) => {
          await app.queue.enqueue({ type: 'ev-ok', key: 'rolled-back' }, { manager });
          await app.queue.enqueueGraph([{ ref: 'a', type: 'ev-ok' }], { manager });
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      let idInside = 0;
      await ds.transaction(async (manager) => {
        idInside = (await app.queue.enqueue({ type: 'ev-ok' }, { manager })).id;
        await sleep(100); // a turn or two: nothing may be delivered before the commit
        expect(MainRecorder.heard).toEqual([]);
      });
      await until(() => MainRecorder.heard.length >= 1, 5_000, 'the committed enqueue');
      await sleep(200);
      expect(MainRecorder.heard.map((e) => [e.event, e.id])).toEqual([['enqueued', idInside]]);
      expect(await app.count()).toBe(1);
    } finally {
      await app.close();
    }
  }, 60_000);

  it("closing the module takes its transaction subscriber off the application's DataSource", async () => {
    MainRecorder.heard = [];
    const appDs = new TypeOrmDataSource(
      (db.dialect === 'sqlite' ? { type: 'better-sqlite3', database: db.location } : { type: db.dialect, url: db.location }) as DataSourceOptions,
    );
    await appDs.initialize();
    const subscribers = appDs.subscribers.length;
    try {
      // Opened, used with { manager } and closed, as a test suite or a hot reload does: each app
      // closed left its subscriber, and with it the whole closed app, on the DataSource (about
      // 50 KB per app, and one more call per subscriber at every commit of the application).
      for (let i = 0; i < 3; i++) {
        const app = await startQueueApp(db, { dataSource: appDs, url: undefined, worker: false, externalTypes: TYPES }, [MainRecorder]);
        try {
          await appDs.transaction((manager) => app.queue.enqueue({ type: 'ev-ok' }, { manager }));
          await until(() => MainRecorder.heard.length > i, 5_000, 'the committed enqueue');
        } finally {
          await app.close();
        }
      }
      expect(MainRecorder.heard.map((e) => e.event)).toEqual(['enqueued', 'enqueued', 'enqueued']);
      expect(appDs.subscribers.length).toBe(subscribers);
    } finally {
      await appDs.destroy();
    }
  }, 60_000);

  it('a completed listener gets the view the finalize wrote, with no read after the commit', async () => {
    CompletedViews.heard = [];
    CompletedViews.attempts = 0;
    const app = await startQueueApp(db, { pollIntervalMs: 50, retryBackoff: { baseMs: 10, maxMs: 20 } }, [CompletedViews]);
    // What each flush of the lifecycle would read after the commit: completed events it gets without their view.
    const lifecycle = app.module.get(JobLifecycle) as unknown as { attachViews(batch: Array<{ event: string; id: number; view?: JobView }>, ids: Set<number>): Promise<void> };
    const attach = lifecycle.attachViews.bind(lifecycle);
    const unviewed: number[] = [];
    const spy = jest.spyOn(lifecycle, 'attachViews').mockImplementation((batch, ids) => {
      unviewed.push(...batch.filter((s) => s.event === 'completed' && !s.view).map((s) => s.id));
      return attach(batch, ids);
    });
    try {
      await resetTables(app);
      // Single jobs (PostgreSQL's one-call complete), jobs in a container (the transactional
      // complete), and a retried job (its view carries the first attempt's error).
      const singles = await Promise.all([1, 2, 3].map((n) => app.queue.enqueue({ type: 'ev-view', args: { n } })));
      const graph = await app.queue.enqueueGraph([
        { ref: 'box', type: 'ev-box' },
        { ref: 'a', type: 'ev-view', parent: 'box', args: { n: 4 } },
        { ref: 'b', type: 'ev-view', parent: 'box', dependsOn: ['a'], args: { n: 5 } },
      ]);
      const retried = await app.queue.enqueue({ type: 'ev-view-retry' });
      const ids = [...singles.map((j) => j.id), graph.a, graph.b, retried.id];
      for (const id of [...ids, graph.box]) await app.queue.waitFor(id, { timeoutMs: 20_000 });
      await until(() => ids.every((id) => CompletedViews.heard.some((v) => v.id === id)), 10_000, 'the completed events');
      await sleep(100);
      for (const id of ids) {
        const heard = CompletedViews.heard.filter((v) => v.id === id);
        expect(heard).toHaveLength(1);
        // Exactly what a read after the commit returns: the database's times, result, stage, error.
        expect(heard[0]).toEqual(await app.queue.get(id));
        expect(heard[0]).toMatchObject({ state: 'done', progress: 100 });
      }
      expect(CompletedViews.heard.find((v) => v.id === singles[0].id)).toMatchObject({ result: { n: 1, doubled: 2 }, currentStage: 'half' });
      expect(CompletedViews.heard.find((v) => v.id === retried.id)).toMatchObject({ attempts: 2, lastError: expect.stringMatching(/first attempt fails/) });
      // Only the container's roll-up (no attempt of this process's) is read after its commit.
      expect(unviewed).toEqual([graph.box]);
    } finally {
      spy.mockRestore();
      await app.close();
    }
  }, 60_000);

  it('costs nothing without listeners: no sink, nothing reported', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: TYPES });
    try {
      const lifecycle = app.module.get(JobLifecycle);
      expect(lifecycle.active).toBe(false);
      const report = jest.spyOn(lifecycle as unknown as { report: (s: unknown) => void }, 'report');
      await app.queue.enqueue({ type: 'ev-ok' });
      await app.queue.enqueueGraph([{ ref: 'a', type: 'ev-ok' }]);
      expect(report).not.toHaveBeenCalled();
    } finally {
      await app.close();
    }
  });
});

@Injectable()
class EmitterListener {
  static heard: Array<[string, number]> = [];
  @OnEvent('job-queue.enqueued')
  onEnqueued(job: JobView, detail: JobEventDetail) {
    EmitterListener.heard.push([detail.event, job.id]);
  }
}

describeDialects('@OnJobEvent forwarding to EventEmitter2', (db) => {
  it('events: { emitter: true } emits job-queue.<event> on the app\'s EventEmitter2', async () => {
    EmitterListener.heard = [];
    const module = await Test.createTestingModule({
      imports: [EventEmitterModule.forRoot(), JobQueueModule.forRoot(db.options({ worker: false, externalTypes: TYPES, events: { emitter: true } }) as never)],
      providers: [EmitterListener],
    }).compile();
    const app = module.createNestApplication({ logger: ['error'] });
    await app.init();
    try {
      const job = await app.get(JobQueueService).enqueue({ type: 'ev-ok' });
      await until(() => EmitterListener.heard.length >= 1, 5_000, 'job-queue.enqueued');
      expect(EmitterListener.heard).toEqual([['enqueued', job.id]]);
    } finally {
      await app.close();
    }
  });

  it('refuses an unknown event name at start-up', async () => {
    @Injectable()
    class Typo {
      @OnJobEvent('finished' as never) onFinished() {}
    }
    const module = await Test.createTestingModule({
      imports: [JobQueueModule.forRoot(db.options({ worker: false, externalTypes: TYPES }) as never)],
      providers: [Typo],
    }).compile();
    await expect(module.init()).rejects.toThrow(InvalidJobEventListenerError);
    await expect(module.init()).rejects.toThrow(/@OnJobEvent on Typo\.onFinished: unknown event "finished"/);
    await module.close().catch(() => undefined);
  });

  it('fails start-up with a clear error when no EventEmitter2 is registered', async () => {
    const module = await Test.createTestingModule({
      imports: [JobQueueModule.forRoot(db.options({ worker: false, externalTypes: TYPES, events: { emitter: true } }) as never)],
    }).compile();
    await expect(module.init()).rejects.toBeInstanceOf(JobEventEmitterMissingError);
    await module.close().catch(() => undefined);
  });
}, ['sqlite']);

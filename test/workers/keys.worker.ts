import { Module } from '@nestjs/common';
import { JobQueueModule, JobQueueService, type JobQueueModuleOptions } from '../../lib';
import { bootContext, runWorker, send, waitForGo, workerOptions } from './worker-harness';

type Options = JobQueueModuleOptions & {
  job: Record<string, unknown>;
  /** Enqueues to make, `parallel` at a time. */
  count: number;
  parallel: number;
  /** Keep enqueueing until this long after `go` instead of `count` times. */
  forMs?: number;
  pauseMs?: number;
  /** Spread the enqueues over this many keys: `<job.key>-<i % keys>`. */
  keys?: number;
};

/**
 * An enqueue-only process that, on `go`, enqueues the same keyed job many times, `parallel` at
 * a time, each with its own args ({ pid, i }), and reports the ids it got back.
 */
runWorker(async () => {
  const { job, count, parallel, forMs, pauseMs, keys, ...moduleOptions } = workerOptions<Options>();

  @Module({ imports: [JobQueueModule.forRoot({ ...moduleOptions, worker: false })] })
  class AppModule {}

  const app = await bootContext(AppModule);
  const queue = app.get(JobQueueService);
  send({ type: 'ready' });
  await waitForGo();
  const ids = new Set<number>();
  let next = 0;
  const from = Date.now();
  const until = forMs === undefined ? Infinity : from + forMs;
  const more = () => (forMs === undefined ? next < count : Date.now() < until);
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (more()) {
        const i = next++;
        const key = keys ? `${String(job.key)}-${i % keys}` : job.key;
        const view = await queue.enqueue({ ...job, key, args: { pid: process.pid, i } } as never);
        ids.add(view.id);
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
    }),
  );
  send({ type: 'done', ids: [...ids], made: next, from, to: Date.now() });
  await app.close();
  process.exit(0);
});

import { Module } from '@nestjs/common';
import { createInterface } from 'node:readline';
import { JobQueueModule, JobQueueService, type JobQueueModuleOptions } from '../../lib';
import { bootContext, runWorker, send, workerOptions } from './worker-harness';

/** One storm: what the parent sends after `go `, as JSON. */
interface Round {
  /** Echoed in the `done-<round>` reply, so the parent tells rounds apart. */
  round: number;
  job: Record<string, unknown>;
  /** Enqueues to make, `parallel` at a time. */
  count: number;
  parallel: number;
  /** Keep enqueueing until this long after `go` instead of `count` times. */
  forMs?: number;
  pauseMs?: number;
  /** Spread the enqueues over this many keys: `<job.key>-<i % keys>`. */
  keys?: number;
}

/**
 * An enqueue-only process that, on each `go <round>` line, enqueues the same keyed job many
 * times, `parallel` at a time, each with its own args ({ pid, i }), and reports the ids it got
 * back as `done-<round>`; `stop` closes it. One process serves every storm of a spec file: the
 * storms race each other's enqueues, not Nest's boot.
 */
runWorker(async () => {
  const moduleOptions = workerOptions<JobQueueModuleOptions>();

  @Module({ imports: [JobQueueModule.forRoot({ ...moduleOptions, worker: false })] })
  class AppModule {}

  const app = await bootContext(AppModule);
  const queue = app.get(JobQueueService);

  const storm = async ({ round, job, count, parallel, forMs, pauseMs, keys }: Round) => {
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
    send({ type: `done-${round}`, ids: [...ids], made: next, from, to: Date.now() });
  };

  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    const text = line.trim();
    if (text.startsWith('go ')) {
      const round = JSON.parse(text.slice(3)) as Round;
      storm(round).catch((err: Error) => send({ type: 'error', message: err.stack ?? err.message }));
    } else if (text === 'stop') {
      rl.close();
      process.stdin.destroy();
      void app.close().then(() => process.exit(0));
    }
  });
  send({ type: 'ready' });
});

/**
 * memory — RSS of one worker process of ours (PostgreSQL, concurrency 10) before, during and
 * after processing N no-op jobs. The worker runs in a child process started with --expose-gc and
 * reports its memory every 250 ms; the bench enqueues N jobs (enqueueGraph, chunks of 1,000)
 * from an enqueue-only app while the worker drains them. Start = idle after boot; peak = the
 * largest sample; end = 1 s after the last job is finalized; then after a forced GC. Heap used
 * after a forced GC at start and at end is the leak indicator (RSS rarely shrinks after a GC).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ChildWorker, type ChildMessage } from '../lib/child-worker';
import { checkRun, FailureLog } from '../lib/correctness';
import { withDatabase } from '../lib/databases';
import type { ExecutionSnapshot } from '../lib/execution-log';
import { cell, mb, num } from '../lib/format';
import { bootEnqueuer, enqueueNoops, ourOptions } from '../lib/ours/our-app';
import { idRange, OurRows } from '../lib/ours/our-rows';
import type { ScenarioReport } from '../lib/report';
import type { BenchContext, Scenario } from '../lib/scenario';
import { RunSeries } from '../lib/stats';
import { drainTimeout, waitUntilDrained } from '../lib/wait';

const SAMPLE_MS = 250;

export const memory: Scenario = {
  name: 'memory',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const jobs = ctx.config.jobs ?? (ctx.config.quick ? 5_000 : 100_000);
    const failures = new FailureLog();
    const series = new RunSeries();
    for (let run = 1; run <= ctx.config.runs; run++) {
      const what = `postgres ${num(jobs)} jobs run ${run}/${ctx.config.runs}`;
      try {
        const r = await measureMemory(jobs);
        ctx.progress(
          `${what}: RSS start ${num(mb(r.start), 1)} MB, peak ${num(mb(r.peak), 1)} MB, end ${num(mb(r.end), 1)} MB, after GC ${num(mb(r.afterGc), 1)} MB${r.problems.length ? ' FAILED' : ''}`,
        );
        if (r.problems.length) {
          failures.add(what, r.problems);
          continue;
        }
        for (const [k, v] of Object.entries(r)) if (typeof v === 'number') series.add(k, k === 'rate' ? v : mb(v));
      } catch (err) {
        failures.add(what, [(err as Error).message]);
      }
    }
    const row = (label: string, key: string, d = 1) => [label, series.get(key) ? cell(series.get(key), d) : 'FAILED'];
    return {
      name: this.name,
      description: `Resident memory of one worker process while it processes ${num(jobs)} jobs.`,
      settings: [
        `PostgreSQL; worker child process (node --expose-gc), concurrency 10, poll 1000 ms, NOTIFY on; samples every ${SAMPLE_MS} ms`,
        `${num(jobs)} jobs enqueued by the bench (enqueueGraph, chunks of 1,000) while the worker runs`,
      ],
      tables: [
        {
          title: `Worker memory — ${num(jobs)} no-op jobs, MB, median (min–max) of ${ctx.config.runs} run(s)`,
          columns: ['Measure', 'Value'],
          rows: [
            row('RSS before boot (node + modules)', 'beforeBoot'),
            row('RSS start (booted, idle)', 'start'),
            row('RSS peak (during)', 'peak'),
            row('RSS end (1 s after the last job)', 'end'),
            row('RSS end after forced GC', 'afterGc'),
            row('Heap used at start, after forced GC', 'heapStartGc'),
            row('Heap used at end, after forced GC', 'heapAfterGc'),
            row('Jobs/s while measured (enqueue overlapped)', 'rate', 0),
          ],
        },
      ],
      failures: failures.entries,
    };
  },
};

interface MemoryRun {
  beforeBoot: number;
  start: number;
  peak: number;
  end: number;
  afterGc: number;
  heapStartGc: number;
  heapAfterGc: number;
  rate: number;
  problems: string[];
}

async function measureMemory(jobs: number): Promise<MemoryRun> {
  return withDatabase('postgres', async (db) => {
    const enq = await bootEnqueuer('postgres', db.location);
    let worker: ChildWorker | undefined;
    try {
      const rows = new OurRows(await db.probe(), 'postgres');
      const started = await ChildWorker.start('our-worker', { module: ourOptions('postgres', db.location), rssSampleMs: SAMPLE_MS }, ['--expose-gc']);
      worker = started.worker;
      const samples: number[] = [];
      worker.on((m: ChildMessage) => m.type === 'rss' && samples.push(Number(m.rss)));
      await sleep(1_000);
      const start = samples.length ? samples[samples.length - 1] : Number(started.ready.rss);
      const startGc = await worker.request({ type: 'gc' }, 'gc');
      const t0 = Date.now();
      const ids = await enqueueNoops(enq.queue, jobs);
      const range = idRange(ids);
      await waitUntilDrained({ remaining: () => rows.open(range), total: jobs, timeoutMs: drainTimeout(jobs) });
      const rate = (jobs / (Date.now() - t0)) * 1000;
      await sleep(1_000);
      const end = samples[samples.length - 1];
      const gc = await worker.request({ type: 'gc' }, 'gc');
      const report = await worker.request({ type: 'report' }, 'report');
      const verdict = checkRun({ expectedIds: ids, executions: report.snapshot as ExecutionSnapshot, ...(await rows.finalization(range)) });
      const beforeBoot = Number((started.ready.beforeBoot as { rss: number }).rss);
      return {
        beforeBoot,
        start,
        peak: Math.max(...samples),
        end,
        afterGc: Number(gc.rss),
        heapStartGc: Number(startGc.heapUsed),
        heapAfterGc: Number(gc.heapUsed),
        rate,
        problems: gc.collected ? verdict.problems : [...verdict.problems, 'worker could not force a GC'],
      };
    } finally {
      await worker?.stop();
      await enq.close();
    }
  });
}

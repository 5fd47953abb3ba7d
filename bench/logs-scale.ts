/**
 * `node dist/bench/logs-scale.js [dialect] [jobs] [lines]`: job logs at a million lines (defaults
 * postgres, 2,000 jobs, 500 lines each). One worker in this process at the bench's defaults runs
 * jobs that each call `ctx.log()` `lines` times in a loop; then it reads 200 first pages and 200
 * second pages of 100 lines of random jobs, and removes the jobs (`removeMany`) against as many
 * jobs without lines, watching the event loop. Prints one JSON line.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { JobHandler, type Dialect, type JobContext, type JobQueueService } from 'nestjs-sql-job-queue';
import { withDatabase } from './lib/databases';
import { bootOurs, ourOptions } from './lib/ours/our-app';

@Injectable()
class LoggingJobs {
  @JobHandler('log.lines')
  async lines(args: { lines: number }, ctx: JobContext): Promise<null> {
    for (let i = 0; i < args.lines; i++) ctx.log(`job ${ctx.id} line ${i}: ${'x'.repeat(60)}`);
    return null;
  }

  @JobHandler('log.none')
  async none(): Promise<null> {
    return null;
  }
}

@Module({ providers: [LoggingJobs] })
class LoggingJobsModule {}

async function main(): Promise<void> {
  const dialect = (process.argv[2] ?? 'postgres') as Dialect;
  const jobs = Number(process.argv[3] ?? 2_000);
  const lines = Number(process.argv[4] ?? 500);
  await withDatabase(dialect, async (db) => {
    const app = await bootOurs(ourOptions(dialect, db.location, { maxLogLines: Math.max(1_000, lines), retention: false }), false, [LoggingJobsModule]);
    try {
      const q = app.queue;
      let started = performance.now();
      await enqueueAndDrain(q, jobs, 'log.lines', { lines });
      const storeMs = performance.now() - started;
      const stored = await countLines(app.queue, jobs);
      if (stored !== jobs * lines) throw new Error(`stored ${stored} lines of ${jobs * lines}`);

      const ids = (await q.find({ type: 'log.lines' }, { limit: 500 })).jobs.map((j) => j.id);
      const first: number[] = [];
      const next: number[] = [];
      for (let i = 0; i < 200; i++) {
        const id = ids[Math.floor(Math.random() * ids.length)];
        let t = performance.now();
        const page = await q.getLogs(id, { limit: 100 });
        first.push(performance.now() - t);
        t = performance.now();
        await q.getLogs(id, { limit: 100, cursor: page.nextCursor });
        next.push(performance.now() - t);
      }

      await enqueueAndDrain(q, jobs, 'log.none', {});
      started = performance.now();
      await q.removeMany({ type: 'log.none' });
      const removeWithoutMs = performance.now() - started;
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      started = performance.now();
      await q.removeMany({ type: 'log.lines' });
      const removeWithMs = performance.now() - started;
      loop.disable();
      const round = (v: number) => Number(v.toFixed(2));
      process.stdout.write(`${JSON.stringify({
        dialect, jobs, lines, storeMs: Math.round(storeMs), linesPerSecond: Math.round((jobs * lines) / (storeMs / 1_000)),
        firstPageMs: { p50: round(pct(first, 0.5)), p95: round(pct(first, 0.95)) }, nextPageMs: { p50: round(pct(next, 0.5)), p95: round(pct(next, 0.95)) },
        removeMs: { withLines: Math.round(removeWithMs), without: Math.round(removeWithoutMs) }, removeEventLoopMaxMs: Math.round(loop.max / 1e6),
      })}\n`);
    } finally {
      await app.close();
    }
  });
}

async function enqueueAndDrain(q: JobQueueService, count: number, type: string, args: object): Promise<void> {
  const before = (await q.stats()).byState.done;
  for (let i = 0; i < count; i += 1_000) {
    await q.enqueueGraph(Array.from({ length: Math.min(1_000, count - i) }, (_, k) => ({ ref: `j${k}`, type, args })));
  }
  while ((await q.stats()).byState.done < before + count) await new Promise((resolve) => setTimeout(resolve, 50));
}

async function countLines(q: JobQueueService, jobs: number): Promise<number> {
  let total = 0;
  for (let cursor: string | null = null, seen = 0; seen < jobs; ) {
    const page: Awaited<ReturnType<JobQueueService['find']>> = await q.find({ type: 'log.lines' }, { limit: 500, cursor });
    for (const job of page.jobs) for (let c: string | null = null, first = true; first || c; first = false) {
      const logs: Awaited<ReturnType<JobQueueService['getLogs']>> = await q.getLogs(job.id, { limit: 1_000, cursor: c });
      total += logs.logs.length;
      c = logs.nextCursor;
    }
    seen += page.jobs.length;
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return total;
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(p * (sorted.length - 1))];
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});

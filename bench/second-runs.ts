/**
 * `node dist/bench/second-runs.js <snooze|retry> [jobs] [dialect] [prefetch]`: every job runs
 * twice, its first run ending with `ctx.snooze(0)` or with a failure retried at once (backoff 0),
 * so the two ways a run hands its job back are compared on the same workload. One worker in this
 * process (concurrency 10), the jobs enqueued first by an enqueue-only app; timed from the first
 * run to the database showing every job done. Prints one JSON line: runs/s and this process's CPU
 * µs per run. Run the two modes alternately, several times each, and compare medians.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { JobHandler, JobQueueModule, type Dialect, type GraphNode, type JobContext, type JobQueueModuleOptions } from 'nestjs-sql-job-queue';
import { withDatabase } from './lib/databases';
import { bootOurs, ourOptions } from './lib/ours/our-app';
import { idRange, OurRows } from './lib/ours/our-rows';
import { timeWorkerPass } from './lib/ours/worker-pass';

let mode: 'snooze' | 'retry' = 'snooze';
let runs = 0;

@Injectable()
class TwiceJobs {
  @JobHandler('twice', { maxAttempts: 2 })
  async twice(_args: unknown, ctx: JobContext): Promise<null> {
    runs++;
    if (mode === 'snooze' && ctx.attempt === 1 && !snoozed.has(ctx.id)) {
      snoozed.add(ctx.id);
      ctx.snooze(0);
    }
    if (mode === 'retry' && ctx.attempt === 1) throw new Error('first run fails');
    return null;
  }
}
const snoozed = new Set<number>();

async function main(): Promise<void> {
  mode = process.argv[2] as typeof mode;
  const jobs = Number(process.argv[3] ?? 10_000);
  const dialect = (process.argv[4] ?? 'postgres') as Dialect;
  const prefetch = Number(process.argv[5] ?? 10);
  if (mode !== 'snooze' && mode !== 'retry') throw new Error(`mode must be snooze or retry, got ${process.argv[2]}`);
  if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`jobs must be a positive integer, got ${process.argv[3]}`);
  await withDatabase(dialect, async (db) => {
    const enqueuer = await bootOurs({ dialect, url: db.location, worker: false, externalTypes: ['twice'] } as JobQueueModuleOptions, false);
    const rows = new OurRows(await db.probe(), dialect);
    try {
      const ids: number[] = [];
      for (let start = 0; start < jobs; start += 1_000) {
        const nodes: GraphNode[] = [];
        for (let n = start; n < Math.min(jobs, start + 1_000); n++) nodes.push({ ref: `j${n}`, type: 'twice', maxAttempts: 2 });
        ids.push(...Object.values(await enqueuer.queue.enqueueGraph(nodes)));
      }
      const range = idRange(ids);
      @Module({
        imports: [JobQueueModule.forRoot(ourOptions(dialect, db.location, { prefetch, retryBackoff: { baseMs: 0, maxMs: 0 } }))],
        providers: [TwiceJobs],
      })
      class WorkerModule {}
      const { ms, cpuUs } = await timeWorkerPass(WorkerModule, rows, range, 'twice', () => runs > 0);
      const states = await rows.states(range, 'twice');
      if (runs !== 2 * jobs || (states.done ?? 0) !== jobs) throw new Error(`expected ${2 * jobs} runs and ${jobs} done, got ${runs} runs and ${JSON.stringify(states)}`);
      process.stdout.write(
        `${JSON.stringify({ mode, dialect, jobs, prefetch, runsPerS: Math.round((runs / ms) * 1_000), cpuUsPerRun: Math.round(cpuUs / runs) })}\n`,
      );
    } finally {
      await enqueuer.close();
    }
  });
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});

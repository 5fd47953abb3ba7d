/**
 * `node dist/bench/failure-mix.js [failEvery] [jobs] [dialect] [prefetch]`: processing rate when
 * one job in `failEvery` fails for good (0: none fail, 1: all do), the others completing. One
 * worker in this process (concurrency 10, prefetch as given, default 10), the jobs enqueued
 * first by an enqueue-only app; timed from the first attempt to the database showing every job
 * finished. Prints one JSON line: jobs/s and this process's CPU µs per job. Meant for before/after
 * comparisons of the finalize path: build the other commit in a git worktree, run its
 * dist/bench/failure-mix.js and this one alternately, several times each, and compare medians.
 * Each node sets maxAttempts 1 itself: the enqueue-only app does not see the handler's option.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { JobHandler, JobQueueModule, type Dialect, type GraphNode, type JobContext, type JobQueueModuleOptions } from 'nestjs-sql-job-queue';
import { withDatabase } from './lib/databases';
import { bootOurs, ourOptions } from './lib/ours/our-app';
import { idRange, OurRows } from './lib/ours/our-rows';
import { timeWorkerPass } from './lib/ours/worker-pass';

let failEvery = 20;
let attempts = 0;

@Injectable()
class MixJobs {
  @JobHandler('mix', { maxAttempts: 1 })
  async mix(args: { n: number }, _ctx: JobContext): Promise<null> {
    attempts++;
    if (failEvery > 0 && args.n % failEvery === 0) throw new Error(`job ${args.n} failed`);
    return null;
  }
}

async function main(): Promise<void> {
  failEvery = Number(process.argv[2] ?? 20);
  const jobs = Number(process.argv[3] ?? 20_000);
  const dialect = (process.argv[4] ?? 'postgres') as Dialect;
  const prefetch = Number(process.argv[5] ?? 10);
  if (!Number.isInteger(failEvery) || failEvery < 0) throw new Error(`failEvery must be an integer ≥ 0, got ${process.argv[2]}`);
  if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`jobs must be a positive integer, got ${process.argv[3]}`);
  await withDatabase(dialect, async (db) => {
    const enqueuer = await bootOurs({ dialect, url: db.location, worker: false, externalTypes: ['mix'] } as JobQueueModuleOptions, false);
    const rows = new OurRows(await db.probe(), dialect);
    try {
      const ids: number[] = [];
      for (let start = 0; start < jobs; start += 1_000) {
        const nodes: GraphNode[] = [];
        for (let n = start; n < Math.min(jobs, start + 1_000); n++) nodes.push({ ref: `j${n}`, type: 'mix', args: { n }, maxAttempts: 1 });
        ids.push(...Object.values(await enqueuer.queue.enqueueGraph(nodes)));
      }
      const range = idRange(ids);
      @Module({ imports: [JobQueueModule.forRoot(ourOptions(dialect, db.location, { prefetch }))], providers: [MixJobs] })
      class WorkerModule {}
      const { ms, cpuUs } = await timeWorkerPass(WorkerModule, rows, range, 'mix', () => attempts > 0);
      const failed = failEvery === 0 ? 0 : Math.floor((jobs - 1) / failEvery) + 1;
      const states = await rows.states(range, 'mix');
      if (attempts !== jobs || (states.failed ?? 0) !== failed || (states.done ?? 0) !== jobs - failed) {
        throw new Error(`expected ${jobs} attempts, ${failed} failed and the rest done, got ${attempts} attempts and ${JSON.stringify(states)}`);
      }
      process.stdout.write(
        `${JSON.stringify({ dialect, jobs, failEvery, prefetch, jobsPerS: Math.round((jobs / ms) * 1_000), cpuUsPerJob: Math.round(cpuUs / jobs) })}\n`,
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

/**
 * many-types — a worker that handles many job types, all the work of one of them.
 *
 * Per dialect (`BENCH_DIALECTS`) and per count of handled types (`MANY_TYPES_COUNTS`, default
 * 1, 10, 100, 1,000), on a fresh database: `--jobs` no-op jobs of the bench's `noop` type are
 * enqueued, then a worker (concurrency 10, poll 1000 ms) starts with the `noop` handler and that
 * many minus one other handlers; jobs/s from the first handler start to the database showing
 * every job done. A claim has to find its work among every type it handles: before the check of
 * which types have ready rows, SQLite read one compound-SELECT arm per type and MariaDB one floor
 * arm per type on every claim (bench/HISTORY.md, many-types).
 */
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { JobHandler, type Dialect } from 'nestjs-sql-job-queue';
import { withDatabase } from '../lib/databases';
import { ExecutionLog } from '../lib/execution-log';
import { cell, num, ratio } from '../lib/format';
import { bootOurs, enqueueNoops, ourOptions } from '../lib/ours/our-app';
import type { ScenarioReport, Table } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { RunSeries } from '../lib/stats';
import { drainRate } from '../lib/ours/drain-rate';

export const manyTypes: Scenario = {
  name: 'many-types',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { jobs } = standardSizes(ctx);
    const counts = (process.env.MANY_TYPES_COUNTS ?? '1,10,100,1000').split(',').map((s) => Number(s.replace(/_/g, '')));
    const dialects = (process.env.BENCH_DIALECTS ?? 'postgres,mysql,sqlite').split(',') as Dialect[];
    const tables: Table[] = [];
    const failures: string[] = [];
    for (const dialect of dialects) {
      const series = new Map(counts.map((n) => [n, new RunSeries()]));
      for (let run = 0; run < ctx.config.runs; run++) {
        for (const n of counts) {
          try {
            const jobsPerSec = await measure(dialect, n, jobs);
            series.get(n)!.add('jobsPerSec', jobsPerSec);
            ctx.progress(`  ${dialect}, ${num(n)} handled types, run ${run + 1}/${ctx.config.runs}: ${num(jobsPerSec)} jobs/s`);
          } catch (err) {
            failures.push(`${dialect}, ${n} types, run ${run + 1}: ${String((err as Error)?.message ?? err).split('\n')[0]}`);
          }
        }
      }
      const base = series.get(counts[0])!.get('jobsPerSec')?.median;
      tables.push({
        title: `${dialect}: one worker handling N job types, ${num(jobs)} no-op jobs of one of them, median (min–max) of ${ctx.config.runs} run(s)`,
        columns: ['handled types', 'jobs/s', `÷ ${num(counts[0])} type(s)`],
        rows: counts.map((n) => [num(n), cell(series.get(n)!.get('jobsPerSec')), ratio(series.get(n)!.get('jobsPerSec')?.median, base)]),
      });
    }
    return {
      name: this.name,
      description: 'Throughput of a worker that handles many job types while the work is of one of them.',
      settings: [`${num(jobs)} no-op jobs per run, enqueued before the worker starts; handled types: ${counts.map((n) => num(n)).join(', ')}`, 'worker: concurrency 10, pollIntervalMs 1000, other options default'],
      tables,
      failures,
    };
  },
};

async function measure(dialect: Dialect, types: number, jobs: number): Promise<number> {
  return withDatabase(dialect, async (db) => {
    const enqueuer = await bootOurs({ dialect, url: db.location, worker: false }, false);
    try {
      await enqueueNoops(enqueuer.queue, jobs);
      const probe = await db.probe();
      ExecutionLog.reset();
      const worker = await bootOurs(ourOptions(dialect, db.location), true, [otherHandlers(types - 1)]);
      try {
        return await drainRate(probe, jobs, 'many-types');
      } finally {
        await worker.close();
      }
    } finally {
      await enqueuer.close();
    }
  });
}

/** A module whose provider handles `count` job types besides the bench's `noop` (none of them get jobs). */
function otherHandlers(count: number): DynamicModule {
  class OtherHandlers {}
  const proto = OtherHandlers.prototype as unknown as Record<string, () => Promise<null>>;
  for (let i = 0; i < count; i++) {
    const name = `other${i}`;
    proto[name] = async () => null;
    JobHandler(`other-${i}` as never)(proto, name, Object.getOwnPropertyDescriptor(proto, name)! as never);
  }
  Injectable()(OtherHandlers);
  @Module({ providers: [OtherHandlers] })
  class OtherHandlersModule {}
  return { module: OtherHandlersModule };
}

/**
 * paused-scale — a worker's throughput while many groups are paused.
 *
 * Per dialect (`BENCH_DIALECTS`), per count of paused groups (`PAUSED_SCALE_COUNTS`, default 0
 * and 40,000) and per count of live groups (`PAUSED_SCALE_LIVE`, default 1 and 100), on a fresh
 * database: the paused groups are written into `job_queue_paused` (none of them holds jobs) and
 * announced with one `pause()`, `--jobs` no-op jobs are enqueued round-robin into the live groups,
 * then a worker (concurrency 10, poll 1000 ms) drains them; jobs/s from the first handler start to
 * the database showing every job done. Every claim names the groups to step over: each claim
 * copied 40,000 of them, and the walk of the groups made a set of them, which took a busy worker to
 * 0.1–0.6× (bench/HISTORY.md, paused-scale).
 */
import type { Dialect } from 'nestjs-sql-job-queue';
import { withDatabase } from '../lib/databases';
import { ExecutionLog } from '../lib/execution-log';
import { cell, num, ratio } from '../lib/format';
import { bootOurs, ourOptions } from '../lib/ours/our-app';
import type { ScenarioReport, Table } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { RunSeries } from '../lib/stats';
import { drainRate } from '../lib/ours/drain-rate';

const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').map((s) => Number(s.replace(/_/g, '')));

export const pausedScale: Scenario = {
  name: 'paused-scale',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { jobs } = standardSizes(ctx);
    const counts = list('PAUSED_SCALE_COUNTS', '0,40000');
    const lives = list('PAUSED_SCALE_LIVE', '1,100');
    const dialects = (process.env.BENCH_DIALECTS ?? 'postgres,mysql,sqlite').split(',') as Dialect[];
    const tables: Table[] = [];
    const failures: string[] = [];
    for (const dialect of dialects) {
      const key = (live: number, paused: number) => `${live}/${paused}`;
      const series = new Map(lives.flatMap((live) => counts.map((paused) => [key(live, paused), new RunSeries()] as const)));
      for (let run = 0; run < ctx.config.runs; run++) {
        for (const live of lives) {
          for (const paused of counts) {
            try {
              const jobsPerSec = await measure(dialect, paused, live, jobs);
              series.get(key(live, paused))!.add('jobsPerSec', jobsPerSec);
              ctx.progress(`  ${dialect}, ${num(live)} live group(s), ${num(paused)} paused, run ${run + 1}/${ctx.config.runs}: ${num(jobsPerSec)} jobs/s`);
            } catch (err) {
              failures.push(`${dialect}, ${live} live, ${paused} paused, run ${run + 1}: ${String((err as Error)?.message ?? err).split('\n')[0]}`);
            }
          }
        }
      }
      tables.push({
        title: `${dialect}: one worker, ${num(jobs)} no-op jobs over the live groups, N other groups paused, median (min–max) of ${ctx.config.runs} run(s)`,
        columns: ['live groups', 'paused groups', 'jobs/s', `÷ ${num(counts[0])} paused`],
        rows: lives.flatMap((live) => {
          const base = series.get(key(live, counts[0]))!.get('jobsPerSec')?.median;
          return counts.map((paused) => {
            const s = series.get(key(live, paused))!.get('jobsPerSec');
            return [num(live), num(paused), cell(s), ratio(s?.median, base)];
          });
        }),
      });
    }
    return {
      name: this.name,
      description: 'Throughput of a worker while many groups (tenants) are paused.',
      settings: [
        `${num(jobs)} no-op jobs per run, round-robin over the live groups, enqueued before the worker starts; paused groups: ${counts.map((n) => num(n)).join(', ')}; live groups: ${lives.map((n) => num(n)).join(', ')}`,
        'the paused groups hold no jobs; written into job_queue_paused in batches, then one pause() call',
        'worker: concurrency 10, pollIntervalMs 1000, other options default (fair-share rotation once more groups than slots are ready)',
      ],
      tables,
      failures,
    };
  },
};

async function measure(dialect: Dialect, paused: number, live: number, jobs: number): Promise<number> {
  return withDatabase(dialect, async (db) => {
    const enqueuer = await bootOurs({ dialect, url: db.location, worker: false }, false);
    try {
      const probe = await db.probe();
      const now = dialect === 'postgres' ? 'now()' : dialect === 'mysql' ? 'UTC_TIMESTAMP(3)' : `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
      for (let i = 0; i < paused; i += 5_000) {
        const rows = Array.from({ length: Math.min(5_000, paused - i) }, (_, k) => `('group', 'tenant-${i + k}', ${now})`);
        await probe.query(`INSERT INTO job_queue_paused (kind, name, paused_at) VALUES ${rows.join(', ')}`);
      }
      await enqueuer.queue.pause({ group: 'tenant-announced' });
      for (let i = 0; i < jobs; i += 1_000) {
        const n = Math.min(1_000, jobs - i);
        await enqueuer.queue.enqueueGraph(Array.from({ length: n }, (_, k) => ({ ref: `j${k}`, type: 'noop', group: `live-${(i + k) % live}`, args: {} })));
      }
      ExecutionLog.reset();
      const worker = await bootOurs(ourOptions(dialect, db.location), true);
      try {
        return await drainRate(probe, jobs, 'paused-scale');
      } finally {
        await worker.close();
      }
    } finally {
      await enqueuer.close();
    }
  });
}

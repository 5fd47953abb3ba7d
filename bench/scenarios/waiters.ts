/**
 * waiters — what pending `waitFor` calls cost a worker, and how fast they resolve (issue 19).
 *
 * Per dialect and per count of pending waiters (0, 1,000, 10,000, 100,000; `BENCH_WAITERS` to
 * change, `BENCH_DIALECTS` to narrow), on a fresh database:
 * 1. Throughput: a worker app (concurrency 10, poll 1000 ms) holds that many `waitFor` calls on
 *    jobs waiting for a gate job scheduled an hour later (the table holds as many such jobs as
 *    the largest count in every run, so runs differ only in their waiters), then processes `--jobs` no-op jobs (held back until the
 *    waiters are registered, then released at once); jobs/s from the first handler start to
 *    the last job done, the worker's Node CPU (user+system over the run, % of one core) and the
 *    waiter statements per second it sent (every autocommit statement reading jobs by id: the
 *    shared watcher's polls, lookups and reads, or the per-call get() of the old waitFor).
 * 2. Latency in this process: with those waiters still pending, sequential single jobs run by
 *    the same app; finished_at (database clock, set in the finalize transaction) → waitFor resolves.
 * 3. Latency from another process: an enqueue-only app holds the same waiters and waits for
 *    jobs that a worker in a child process runs; finished_at → waitFor resolves.
 * `BENCH_CPU_PROF=dir` writes a V8 CPU profile of each throughput run there (what the waiters cost, by function).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as ours from 'nestjs-sql-job-queue';
import type { Dialect, GraphNode, JobQueueService } from 'nestjs-sql-job-queue';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { Sql } from '../../lib/database/sql';
import { ChildWorker } from '../lib/child-worker';
import { startCpuProfile } from '../lib/cpu-profile';
import { withDatabase, type BenchDatabase } from '../lib/databases';
import { ExecutionLog, wallNow } from '../lib/execution-log';
import { cell, num, ratio } from '../lib/format';
import { bootOurs, ourOptions, type OurApp } from '../lib/ours/our-app';
import type { ScenarioReport, Table } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { percentile, RunSeries } from '../lib/stats';
import { drainTimeout, waitUntilDrained } from '../lib/wait';

const HOUR = 3_600_000;
const POLL_MS = 1_000;
/** A statement that reads jobs by id: the old per-call get(), or the watcher's batched reads. */
const WAITER_STATEMENT = / FROM jobs WHERE id (= ANY\(|IN \(|= (\$1|\?)$)|LEFT JOIN jobs j ON j\.id = w\.id/;

interface RunResult {
  jobsPerSec: number;
  statementsPerSec: number;
  /** From JobWaiters.counters() (NaN on builds without it). */
  pollStatementsPerSec: number;
  pollRoundsPerSec: number;
  cpuPct: number;
  cpuMsPer1k: number;
  localP50: number;
  localP95: number;
  remoteP50: number;
  remoteP95: number;
  remoteMax: number;
}

export const waitersScenario: Scenario = {
  name: 'waiters',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { jobs } = standardSizes(ctx);
    const counts = (process.env.BENCH_WAITERS ?? '0,1000,10000,100000').split(',').map((s) => Number(s.replace(/_/g, '')));
    const dialects = (process.env.BENCH_DIALECTS ?? 'postgres,mysql,sqlite').split(',') as Dialect[];
    // Each sample from another process waits up to a poll interval on MySQL and SQLite: 20 per run by default.
    const samples = ctx.config.samples ?? (ctx.config.quick ? 10 : 20);
    const tables: Table[] = [];
    const failures: string[] = [];
    for (const dialect of dialects) {
      const series = new Map(counts.map((n) => [n, new RunSeries()]));
      const latency = new Map(counts.map((n) => [n, { local: [] as number[], remote: [] as number[] }]));
      for (let run = 0; run < ctx.config.runs; run++) {
        for (const n of counts) {
          ctx.progress(`${dialect}: ${num(n)} waiters, run ${run + 1}/${ctx.config.runs}`);
          try {
            const r = await measure(dialect, n, Math.max(...counts), jobs, samples, latency.get(n)!);
            const s = series.get(n)!;
            for (const [k, v] of Object.entries(r)) s.add(k, v);
            ctx.progress(
              `  ${num(r.jobsPerSec)} jobs/s, ${num(r.statementsPerSec, 1)} waiter statements/s, CPU ${num(r.cpuPct)}%, ` +
                `resolve p50 here ${num(r.localP50, 1)} ms, other process ${num(r.remoteP50, 1)} ms (max ${num(r.remoteMax)})`,
            );
          } catch (err) {
            failures.push(`${dialect}, ${n} waiters, run ${run + 1}: ${String((err as Error)?.message ?? err).split('\n')[0]}`);
          }
        }
      }
      const base = series.get(counts[0])!.get('jobsPerSec')?.median;
      tables.push({
        title: `${dialect}: a worker with N pending waitFor calls (${num(jobs)} no-op jobs, concurrency 10, poll ${POLL_MS} ms)`,
        columns: [
          'pending waiters',
          'jobs/s',
          `vs ${num(counts[0])}`,
          'waiter statements/s',
          'of which poll statements/s (rounds/s)',
          'Node CPU % of a core',
          'Node CPU ms / 1,000 jobs',
          'resolve here p50 / p95 ms',
          'resolve, other process p50 / p95 / max ms',
        ],
        rows: counts.map((n) => {
          const s = series.get(n)!;
          const l = latency.get(n)!;
          return [
            num(n),
            cell(s.get('jobsPerSec')),
            ratio(s.get('jobsPerSec')?.median, base),
            cell(s.get('statementsPerSec'), 1),
            `${cell(s.get('pollStatementsPerSec'), 1)} (${cell(s.get('pollRoundsPerSec'), 2)})`,
            cell(s.get('cpuPct')),
            cell(s.get('cpuMsPer1k')),
            `${num(percentile(l.local, 50), 1)} / ${num(percentile(l.local, 95), 1)}`,
            `${num(percentile(l.remote, 50), 1)} / ${num(percentile(l.remote, 95), 1)} / ${num(Math.max(...l.remote))}`,
          ];
        }),
        notes: [
          'jobs/s, statements/s and CPU: median (min–max) over runs; latencies: percentiles over the samples of all runs.',
          `Latency: ${samples} sequential jobs per run and place; finished_at (database clock, taken at the start of the finalize transaction, so its commit is included) → waitFor resolves (wall clock, same host).`,
          'CPU: the whole bench process (worker, waiters, and the bench\'s own drain polling), user + system, from the release of the jobs to the last one done.',
        ],
      });
    }
    return {
      name: this.name,
      description: 'Cost of pending waitFor calls to a worker, and the time from a job finishing to its waiter resolving.',
      settings: [
        `${num(jobs)} no-op jobs per throughput run; waiters on jobs waiting for a gate job due in an hour: ${counts.map((n) => num(n)).join(', ')}`,
        `${samples} latency samples per run and place (this process / another process)`,
        `our apps: concurrency 10, pollIntervalMs ${POLL_MS}; PostgreSQL with LISTEN/NOTIFY (default)`,
      ],
      tables,
      failures,
    };
  },
};

async function measure(
  dialect: Dialect,
  waiters: number,
  /** Jobs to wait for in the table, whatever `waiters` is: the runs compare waiters, not table sizes. */
  waitable: number,
  jobs: number,
  samples: number,
  latency: { local: number[]; remote: number[] },
): Promise<RunResult> {
  return withDatabase(dialect, async (db) => {
    const worker = await bootOurs(ourOptions(dialect, db.location, { pollIntervalMs: POLL_MS }), true);
    let future: number[] = [];
    let throughput: Omit<RunResult, 'localP50' | 'localP95' | 'remoteP50' | 'remoteP95' | 'remoteMax'>;
    const local: number[] = [];
    try {
      const statements = countWaiterStatements(worker);
      future = (await enqueueWaitedFor(worker.queue, waitable)).slice(0, waiters);
      const held = await enqueueHeld(worker.queue, jobs);
      hold(future.map((id) => worker.queue.waitFor(id)));
      await registered(worker, waiters);
      const profile = await startCpuProfile();
      throughput = await processHeld(db, worker, held, statements);
      await profile?.stop(`${dialect}-${waiters}`);
      for (let i = 0; i < samples; i++) local.push(await sampleLatency(worker.queue, worker.queue));
    } finally {
      await worker.close();
    }
    const remote = await remoteLatency(db, future, samples);
    latency.local.push(...local);
    latency.remote.push(...remote);
    return {
      ...throughput,
      localP50: percentile(local, 50),
      localP95: percentile(local, 95),
      remoteP50: percentile(remote, 50),
      remoteP95: percentile(remote, 95),
      remoteMax: Math.max(...remote),
    };
  });
}

/** Jobs that nobody runs during the measurement: due in an hour. */
async function enqueueHeld(queue: JobQueueService, count: number): Promise<number[]> {
  const ids: number[] = [];
  const runAfter = new Date(Date.now() + HOUR);
  for (let start = 0; start < count; start += 1_000) {
    const nodes: GraphNode[] = [];
    for (let i = start; i < Math.min(count, start + 1_000); i++) nodes.push({ ref: `j${i}`, type: 'noop', args: {}, runAfter });
    const out = await queue.enqueueGraph(nodes);
    for (const node of nodes) ids.push(out[node.ref]);
  }
  return ids;
}

/**
 * Jobs to wait for that stay open during the measurement without weighing on the claim: each
 * 1,000 are `waiting` on a gate job due in an hour. (Waiting on jobs that are themselves due in
 * an hour measures something else: 100,000 future-dated ready rows slow every claim, which walks
 * the ready index past them, with or without waiters.)
 */
async function enqueueWaitedFor(queue: JobQueueService, count: number): Promise<number[]> {
  const ids: number[] = [];
  const runAfter = new Date(Date.now() + HOUR);
  for (let start = 0; start < count; start += 1_000) {
    const nodes: GraphNode[] = [{ ref: 'gate', type: 'noop', args: {}, runAfter }];
    for (let i = start; i < Math.min(count, start + 1_000); i++) nodes.push({ ref: `j${i}`, type: 'noop', args: {}, dependsOn: ['gate'] });
    const out = await queue.enqueueGraph(nodes);
    for (const node of nodes.slice(1)) ids.push(out[node.ref]);
  }
  return ids;
}

/** Pending until the app closes; their shutdown rejections are expected. */
function hold(promises: Array<Promise<unknown>>): void {
  for (const p of promises) p.catch(() => undefined);
}

type Counters = { pending: number; lookupQueries: number; polls: number; pollQueries: number };

function watcherOf(app: OurApp): { counters(): Counters } | undefined {
  const Waiters = (ours as Record<string, unknown>).JobWaiters as (new (...args: never[]) => { counters(): Counters }) | undefined;
  return Waiters ? app.app.get(Waiters) : undefined;
}

/** Waits until the app's watcher holds `count` waiters with their first lookups answered (or a fixed pause on older builds). */
async function registered(app: OurApp, count: number): Promise<void> {
  const waiters = watcherOf(app);
  if (!waiters) return void (await sleep(1_500 + count / 20));
  const lookups = Math.ceil(count / 10_000);
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(50)) {
    const c = waiters.counters();
    if (c.pending >= count && c.lookupQueries >= lookups) break;
  }
  await sleep(200);
}

/** Counts the app's autocommit statements that read jobs by id. */
function countWaiterStatements(app: OurApp): { count: number } {
  const db = app.app.get(JobQueueDatabase);
  const counter = { count: 0 };
  const run = db.run.bind(db);
  db.run = (statement: Sql) => {
    if (WAITER_STATEMENT.test(statement.render(db.dialect.name).text)) counter.count++;
    return run(statement);
  };
  return counter;
}

async function processHeld(db: BenchDatabase, worker: OurApp, held: number[], statements: { count: number }) {
  const probe = await db.probe();
  ExecutionLog.reset();
  const total = held.length + 1;
  const cpu0 = process.cpuUsage();
  const s0 = statements.count;
  const w0 = watcherOf(worker)?.counters();
  const t0 = wallNow();
  await probe.query(`UPDATE jobs SET run_after = created_at WHERE id >= ${held[0]}`);
  await worker.queue.enqueue({ type: 'noop', args: {} }); // wakes the worker now, not at its next poll
  const end = await waitUntilDrained({
    remaining: async () => total - (await probe.scalar(`SELECT COUNT(*) FROM jobs WHERE state = 'done'`)),
    total,
    timeoutMs: drainTimeout(total),
    what: 'waiters',
  });
  const cpu = process.cpuUsage(cpu0);
  const first = ExecutionLog.current.firstStartAt ?? t0;
  const w1 = watcherOf(worker)?.counters();
  const secs = (end - t0) / 1000;
  return {
    pollStatementsPerSec: w0 && w1 ? (w1.pollQueries - w0.pollQueries) / secs : NaN,
    pollRoundsPerSec: w0 && w1 ? (w1.polls - w0.polls) / secs : NaN,
    jobsPerSec: total / ((end - first) / 1000),
    statementsPerSec: (statements.count - s0) / ((end - t0) / 1000),
    cpuPct: ((cpu.user + cpu.system) / 1000 / (end - t0)) * 100,
    cpuMsPer1k: ((cpu.user + cpu.system) / 1000 / total) * 1000,
  };
}

/** One job enqueued through `enqueuer`, waited for through `waiter`: its finished_at → the waiter resolves. */
async function sampleLatency(enqueuer: JobQueueService, waiter: JobQueueService): Promise<number> {
  await sleep(Math.random() * 50);
  const job = await enqueuer.enqueue({ type: 'noop', args: {} });
  const done = await waiter.waitFor(job.id, { timeoutMs: 60_000 });
  const resolvedAt = wallNow();
  if (done.state !== 'done' || !done.finishedAt) throw new Error(`job ${job.id} ended ${done.state}`);
  return resolvedAt - done.finishedAt.getTime();
}

/** The same waiters in an enqueue-only app; the sample jobs run in a worker process. */
async function remoteLatency(db: BenchDatabase, future: number[], samples: number): Promise<number[]> {
  const app = await bootOurs({ dialect: db.dialect, url: db.location, worker: false, pollIntervalMs: POLL_MS } as ours.JobQueueModuleOptions, false);
  let child: ChildWorker | undefined;
  try {
    hold(future.map((id) => app.queue.waitFor(id)));
    await registered(app, future.length);
    child = (await ChildWorker.start('our-worker', { module: ourOptions(db.dialect, db.location, { pollIntervalMs: POLL_MS }) })).worker;
    const out: number[] = [];
    await sampleLatency(app.queue, app.queue); // warm-up
    for (let i = 0; i < samples; i++) out.push(await sampleLatency(app.queue, app.queue));
    return out;
  } finally {
    await child?.stop();
    await app.close();
  }
}


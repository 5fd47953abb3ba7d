/**
 * redrive — `retryMany` and `cancelMany` of 100,000 jobs, with no worker and with 2 worker
 * processes running (library defaults, no-op handler). 10% of the jobs are upstreams of fan-in
 * graphs (10 upstreams → 1 dependent), the rest independent. retryMany re-drives them from
 * `failed` (their dependents `cancelled`), and the workers run what it re-opens as it goes;
 * cancelMany cancels them from `ready` (dependents `waiting`) while the workers take the oldest
 * ones, so with workers it cancels fewer (the table says how many). Reports wall time, the
 * statements of the call's transactions and CPU per job of the calling process, the database
 * server and the workers. Runs of 0 and 2 workers alternate, on one database per dialect, reset
 * by bulk SQL between runs.
 */
import { readFileSync } from 'node:fs';
import type { Dialect, GraphNode } from 'nestjs-sql-job-queue';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { ChildWorker } from '../lib/child-worker';
import { FailureLog } from '../lib/correctness';
import { CpuMeter } from '../lib/cpu-meter';
import { withDatabase, type BenchDatabase, type Probe } from '../lib/databases';
import { cell, num, ratio } from '../lib/format';
import { analyze } from '../lib/ours/filler';
import { bootEnqueuer, type OurApp } from '../lib/ours/our-app';
import type { ScenarioReport, Table } from '../lib/report';
import type { BenchContext, Scenario } from '../lib/scenario';
import { RunSeries } from '../lib/stats';

/** All three by default; REDRIVE_BENCH_DIALECTS=postgres (comma-separated) measures fewer. */
const DIALECTS: Dialect[] = (process.env.REDRIVE_BENCH_DIALECTS ?? 'postgres,mysql,sqlite').split(',').filter(Boolean) as Dialect[];
const FAN = 10;
type Op = 'retry' | 'cancel';
/** Both by default; REDRIVE_BENCH_OPS=cancel measures one. */
const OPS = (process.env.REDRIVE_BENCH_OPS ?? 'retry,cancel').split(',').filter(Boolean) as Op[];

const NOW: Record<Dialect, string> = { postgres: 'now()', mysql: 'UTC_TIMESTAMP(3)', sqlite: `strftime('%Y-%m-%d %H:%M:%f', 'now')` };

export const redrive: Scenario = {
  name: 'redrive',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const jobs = ctx.config.jobs ?? (ctx.config.quick ? 10_000 : 100_000);
    const failures = new FailureLog();
    const series = new RunSeries();
    for (const dialect of DIALECTS) {
      try {
        await withDatabase(dialect, async (db) => {
          const filler = await bootEnqueuer(dialect, db.location);
          try {
            await fill(filler, jobs);
          } finally {
            await filler.close();
          }
          for (let run = 1; run <= ctx.config.runs; run++) {
            for (const op of OPS) {
              // Which goes first alternates from run to run: the machine's load falls on both alike.
              for (const workers of run % 2 ? [0, 2] : [2, 0]) {
                const r = await measure(dialect, db, op, workers, jobs);
                ctx.progress(`${dialect} ${op}Many, ${workers} workers, run ${run}: ${num(r.ms)} ms for ${num(r.count)} jobs, ${num(r.statements)} statements, load ${r.load}`);
                const key = `${dialect}:${op}:${workers}`;
                series.add(`${key}:ms`, r.ms);
                series.add(`${key}:count`, r.count);
                series.add(`${key}:stmts`, (r.statements / r.count) * 1_000);
                series.add(`${key}:node`, r.nodeUs / r.count);
                if (r.databaseUs !== undefined) series.add(`${key}:db`, r.databaseUs / r.count);
                series.add(`${key}:workers`, r.workersUs / r.count);
              }
            }
          }
        });
      } catch (err) {
        failures.add(dialect, [(err as Error).message]);
      }
    }
    return {
      name: this.name,
      description: `retryMany and cancelMany of ${num(jobs)} jobs, alone and while 2 worker processes run.`,
      settings: [
        `${num(jobs)} jobs: ${num(jobs / FAN / 10)} fan-in graphs of ${FAN} upstreams → 1 dependent (the upstreams are selected, the dependents follow by cascade) and ${num(jobs * 0.9)} independent jobs; enqueued once per dialect through enqueueGraph, reset by bulk SQL (then VACUUM ANALYZE / ANALYZE) before every run`,
        `retryMany({ state: 'failed' }) with the dependents cancelled; cancelMany({ state: [every unfinished state] }) of the jobs ready and the dependents waiting`,
        'workers: 2 processes (bench/workers/our-worker, library defaults: concurrency 10, poll 1 s, NOTIFY on PostgreSQL), started before the call; with workers, cancelMany races them (they take the oldest jobs first) and cancels fewer',
        `${ctx.config.runs} run(s) per configuration, 0 and 2 workers alternating; medians (min–max)`,
        'statements: those of the call\'s own transactions (the keyset reads between them are not counted); CPU from process.cpuUsage and /proc (PostgreSQL: the run database\'s backends, workers\' included; MariaDB: the whole server)',
      ],
      tables: [table(series, jobs)],
      failures: failures.entries,
    };
  },
};

async function fill(app: OurApp, jobs: number): Promise<void> {
  const graphs = jobs / FAN / 10;
  for (let g = 0; g < graphs; g += 100) {
    const nodes: GraphNode[] = [];
    for (let k = g; k < Math.min(graphs, g + 100); k++) {
      const ups = Array.from({ length: FAN }, (_, i) => ({ ref: `u${k}-${i}`, type: 'noop', args: {} }));
      nodes.push(...ups, { ref: `d${k}`, type: 'noop', args: {}, dependsOn: ups.map((u) => u.ref) });
    }
    await app.queue.enqueueGraph(nodes);
  }
  const independent = jobs - graphs * FAN;
  for (let s = 0; s < independent; s += 1_000) {
    await app.queue.enqueueGraph(Array.from({ length: Math.min(1_000, independent - s) }, (_, i) => ({ ref: `j${i}`, type: 'noop', args: {} })));
  }
}

/** Every job back to where the operation starts: failed (dependents cancelled) or ready (dependents waiting). */
async function reset(probe: Probe, dialect: Dialect, op: Op): Promise<void> {
  const now = NOW[dialect];
  const isDependent = 'id IN (SELECT job_id FROM job_deps)';
  if (op === 'retry') {
    await probe.query(`UPDATE jobs SET state = CASE WHEN ${isDependent} THEN 'cancelled' ELSE 'failed' END, attempts = max_attempts,
      last_error = 'planned', finished_at = ${now}, lease_owner = NULL, lease_expires = NULL, pending_deps = 0`);
  } else {
    await probe.query(`UPDATE jobs SET state = CASE WHEN ${isDependent} THEN 'waiting' ELSE 'ready' END,
      pending_deps = CASE WHEN ${isDependent} THEN ${FAN} ELSE 0 END, attempts = 0, last_error = NULL, result = NULL,
      started_at = NULL, finished_at = NULL, lease_owner = NULL, lease_expires = NULL, run_after = ${now}`);
  }
  await analyze(probe, dialect);
}

interface Measured {
  ms: number;
  count: number;
  statements: number;
  nodeUs: number;
  databaseUs?: number;
  workersUs: number;
  load: string;
}

async function measure(dialect: Dialect, db: BenchDatabase, op: Op, workers: number, jobs: number): Promise<Measured> {
  // A probe and an app of their own per run, closed before the next: the PostgreSQL CPU sampler
  // counts each backend of the database whole, so none may carry CPU over from an earlier run.
  const probe = await db.probe();
  await reset(probe, dialect, op);
  await probe.close();
  const app = await bootEnqueuer(dialect, db.location);
  const started: ChildWorker[] = [];
  try {
    for (let k = 0; k < workers; k++) started.push((await ChildWorker.start('our-worker', { module: { dialect, url: db.location } })).worker);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
    const database = app.app.get(JobQueueDatabase);
    let statements = 0;
    const transaction = database.transaction.bind(database);
    database.transaction = ((work: (tx: SqlExecutor) => Promise<unknown>, options?: never) =>
      transaction((tx) => work({ dialect: tx.dialect, run: (s) => (statements++, tx.run(s)) }), options)) as typeof database.transaction;
    const workerCpu0 = started.map((w) => cpuOf(w.pid));
    const meter = await CpuMeter.start(dialect, db.name);
    const t0 = performance.now();
    let count: number;
    try {
      count = (op === 'retry' ? await app.queue.retryMany({ state: 'failed' }) : await app.queue.cancelMany({ state: ['waiting', 'ready', 'leased', 'running'] })).count;
    } finally {
      delete (database as { transaction?: unknown }).transaction;
    }
    const ms = performance.now() - t0;
    const cpu = await meter.stop();
    const workersUs = started.reduce((sum, w, k) => sum + cpuOf(w.pid) - workerCpu0[k], 0);
    if (op === 'retry' && count !== jobs) throw new Error(`retryMany retried ${count} of ${jobs}`);
    if (op === 'retry' && workers) {
      // The workers finish what was re-driven before the next reset (not timed).
      const check = await db.probe();
      try {
        const deadline = Date.now() + 600_000;
        while ((await check.scalar(`SELECT COUNT(*) FROM jobs WHERE state <> 'done'`)) > 0) {
          if (Date.now() > deadline) throw new Error('the workers did not finish the re-driven jobs within 10 minutes');
          await new Promise((r) => setTimeout(r, 500));
        }
      } finally {
        await check.close();
      }
    }
    return { ms, count, statements, nodeUs: cpu.nodeUs, databaseUs: cpu.databaseUs, workersUs, load };
  } finally {
    for (const w of started) await w.stop();
    await app.close();
  }
}

/** utime + stime of a process, in µs (USER_HZ 100). */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

function table(series: RunSeries, jobs: number): Table {
  const rows: string[][] = [];
  for (const dialect of DIALECTS) {
    for (const op of OPS) {
      const alone = series.get(`${dialect}:${op}:0:ms`);
      for (const workers of [0, 2]) {
        const key = `${dialect}:${op}:${workers}`;
        const ms = series.get(`${key}:ms`);
        if (!ms) continue;
        rows.push([
          dialect,
          `${op}Many`,
          String(workers),
          num(series.get(`${key}:count`)?.median ?? NaN),
          cell(ms),
          workers ? ratio(ms.median, alone?.median) : '',
          num(series.get(`${key}:stmts`)?.median ?? NaN, 1),
          num(series.get(`${key}:node`)?.median ?? NaN, 1),
          num(series.get(`${key}:db`)?.median ?? NaN, 1),
          workers ? num(series.get(`${key}:workers`)?.median ?? NaN, 1) : '',
        ]);
      }
    }
  }
  return {
    title: `retryMany / cancelMany of ${num(jobs)} jobs, alone and with 2 worker processes`,
    columns: ['Dialect', 'Call', 'Workers', 'Jobs', 'Wall ms', 'vs. alone', 'Statements / 1,000 jobs', 'Caller CPU µs/job', 'DB CPU µs/job', 'Workers CPU µs/job'],
    rows,
    notes: [
      'Jobs = the count the call returned (with workers, cancelMany finds fewer jobs left to cancel); CPU per job divides by it.',
      'vs. alone = median wall time with workers ÷ median without; DB CPU includes what the workers\' statements cost the server.',
    ],
  };
}

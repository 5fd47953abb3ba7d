/**
 * fair-share-scale — fair share with many tenants. For each case, on a fresh database: enqueue
 * G groups × J jobs of ~2 ms (a 2 ms timer) with no worker running, jobs of one group
 * interleaved with the others' in id order, then start one worker in this process (concurrency
 * 10, defaults otherwise) and time first handler start → every job finalized in the database.
 * Reported: jobs/s and its ratio to the one-group case, p50/p99/max over groups of each group's
 * first start (ms after the first handler start), and Jain's fairness index of the slots each
 * group got while all were still backlogged (the first Σ weight × (J − 1) starts; 1.0 =
 * perfectly equal). The weighted case puts 2 groups of weight 10 (10 × J jobs each) among 1,000
 * of weight 1 and reports Jain's index of slots ÷ weight, and the heavy groups' slots over the
 * light groups' mean.
 * Every dialect up to 100,000 groups (MariaDB and SQLite with a quarter of the jobs per group, so
 * 100,000 × 2 there too: ~1.5-2 minutes a run on MariaDB, enqueue included).
 */
import { loadavg } from 'node:os';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClaimService, JobContext, JobHandler, JobQueueModule, JobQueueService, type Dialect, type GraphNode, type JobQueueModuleOptions } from 'nestjs-sql-job-queue';
import { FailureLog } from '../lib/correctness';
import { CpuMeter } from '../lib/cpu-meter';
import { withDatabase } from '../lib/databases';
import { cell, num } from '../lib/format';
import { ourOptions } from '../lib/ours/our-app';
import type { ScenarioReport, Table } from '../lib/report';
import type { BenchContext, Scenario } from '../lib/scenario';
import { RunSeries, percentile, type Spread } from '../lib/stats';

interface Start {
  group: string;
  at: number;
}
const starts: Start[] = [];

/** The worker's claims and the jobs they returned, counted by wrapping ClaimService.claim. */
const claims = { calls: 0, jobs: 0 };
const claimOf = ClaimService.prototype.claim;
ClaimService.prototype.claim = async function (this: ClaimService, ...args: Parameters<typeof claimOf>) {
  const got = await claimOf.apply(this, args);
  claims.calls++;
  claims.jobs += got.length;
  return got;
};

@Injectable()
class TenantJobs {
  @JobHandler('tenant-work')
  async work(args: { ms: number }, ctx: JobContext): Promise<void> {
    starts.push({ group: ctx.group, at: performance.now() });
    await new Promise((r) => setTimeout(r, args.ms));
  }
}

@Module({})
class FairBenchModule {
  static with(options: JobQueueModuleOptions, handlers: boolean): DynamicModule {
    return { module: FairBenchModule, imports: [JobQueueModule.forRoot(options)], providers: handlers ? [TenantJobs] : [] };
  }
}

interface Case {
  label: string;
  groups: number;
  perGroup: number;
  /** Weight 10 for these group indexes, 1 for the others. */
  heavy?: number[];
  /** Overrides the worker's prefetch (default: concurrency). */
  prefetch?: number;
  /**
   * Every group named in the options: a cap of 5 in flight (`limits.groups`) or 1,000 starts a
   * second (`rateLimits.groups`), neither of which binds here. What it measures is what naming
   * thousands of tenants costs each claim. `global`: only a global cap of 1,000, the reference
   * (the claim under any cap takes the careful path: a transaction, no prefetch).
   */
  named?: 'caps' | 'rates' | 'global';
}

const JOB_MS = 2;

function cases(dialect: Dialect, quick: boolean): Case[] {
  // MariaDB and SQLite: a quarter of the jobs (J ≥ 2), to keep the run short; 100,000 × 2 all the same.
  const scale = quick ? 8 : dialect === 'postgres' ? 1 : 4;
  const c = (groups: number, perGroup: number, extra: Partial<Case> = {}): Case => {
    const j = Math.max(2, Math.round(perGroup / scale));
    const base = `${num(groups - (extra.heavy?.length ?? 0))} × ${num(j)}`;
    const named = extra.named ? { caps: ', every group capped', rates: ', every group rate-limited', global: ', a global cap only' }[extra.named] : '';
    const label = extra.heavy ? `weighted: ${extra.heavy.length} × w10 (${num(10 * j)} jobs) + ${base} w1` : `${base}${extra.prefetch === 0 ? ', prefetch 0' : ''}${named}`;
    return { label, groups, perGroup: j, ...extra };
  };
  const all = [
    c(1, 16_000),
    // Reference: one group without prefetch.
    c(1, 16_000, { prefetch: 0 }),
    c(100, 160),
    c(1_000, 16),
    // Many groups without prefetch: the rate before the rotation claim prefetched.
    c(1_000, 16, { prefetch: 0 }),
    c(1_600, 10), // the issue's starvation case: g01000–g01599 waited for the first 1,000 to drain
    c(10_000, 2),
    c(100_000, 2),
    c(1_002, 16, { heavy: [250, 750] }),
    // Per-tenant limits: every one of 2,000 groups named in limits.groups, or in rateLimits.groups;
    // the reference, a global cap alone.
    c(2_000, 8, { named: 'global' }),
    c(2_000, 8, { named: 'caps' }),
    c(2_000, 8, { named: 'rates' }),
  ];
  // FAIR_SHARE_MAX_GROUPS=10000 leaves out the larger cases.
  // Every dialect to 100,000 groups: a cliff past the groups a run exercises would go unseen.
  const max = Math.min(Number(process.env.FAIR_SHARE_MAX_GROUPS ?? Infinity), quick ? 1_600 : 100_000);
  // FAIR_SHARE_CASES=1000,weighted keeps only those cases (by group count, `1000p0` for prefetch 0,
  // `weighted`, `global`, `caps`, `rates`); the one-group case always stays first, as the reference of every ratio.
  const only = process.env.FAIR_SHARE_CASES?.split(',').map((x) => x.trim());
  const id = (x: Case) => x.named ?? (x.heavy ? 'weighted' : `${x.groups}${x.prefetch === 0 ? 'p0' : ''}`);
  return all.filter((x) => x.groups <= max && (!only || x === all[0] || only.includes(id(x))));
}

/** `0.85× (0.80–0.90)`: median (min–max) of the per-run ratios. */
function ratioCell(r: Spread | undefined): string {
  if (!r) return 'n/a';
  return r.n > 1 && r.min !== r.max ? `${num(r.median, 2)}× (${num(r.min, 2)}–${num(r.max, 2)})` : `${num(r.median, 2)}×`;
}

const groupKey = (i: number) => `t${String(i).padStart(6, '0')}`;

/** Jain's fairness index of x: (Σx)² / (n · Σx²); 1 when all equal. */
export function jain(x: readonly number[]): number {
  const sum = x.reduce((a, b) => a + b, 0);
  const sq = x.reduce((a, b) => a + b * b, 0);
  return sq ? (sum * sum) / (x.length * sq) : 1;
}

interface RunResult {
  rate: number;
  firstP50: number;
  firstP99: number;
  firstMax: number;
  jain: number;
  heavyRatio?: number;
  /** CPU ms per 1,000 jobs: this process (the worker), and PostgreSQL's backends. */
  nodeCpu: number;
  dbCpu?: number;
  jobsPerClaim: number;
}

async function runCase(dialect: Dialect, c: Case): Promise<RunResult> {
  return withDatabase(dialect, async (db) => {
    const boot = (options: JobQueueModuleOptions, handlers: boolean) =>
      NestFactory.createApplicationContext(FairBenchModule.with(options, handlers), { logger: ['error', 'warn'] });
    const enqueuer = await boot({ dialect, url: db.location, worker: false, externalTypes: ['tenant-work'] } as JobQueueModuleOptions, false);
    const weightOf = (g: number) => (c.heavy?.includes(g) ? 10 : 1);
    let batch: GraphNode[] = [];
    const queue = enqueuer.get(JobQueueService);
    // A heavy group gets weight × J jobs, so it stays backlogged as long as the light ones.
    const jobsOf = (g: number) => weightOf(g) * c.perGroup;
    const total = Array.from({ length: c.groups }, (_, g) => jobsOf(g)).reduce((a, b) => a + b, 0);
    for (let j = 0; j < c.perGroup * 10; j++) {
      for (let g = 0; g < c.groups; g++) {
        if (j >= jobsOf(g)) continue;
        batch.push({ ref: `${g}.${j}`, type: 'tenant-work', group: groupKey(g), weight: weightOf(g), args: { ms: JOB_MS } });
        if (batch.length === 2_000) {
          await queue.enqueueGraph(batch);
          batch = [];
        }
      }
    }
    if (batch.length) await queue.enqueueGraph(batch);
    // Closed before the worker starts, so that the database CPU measured is the worker's.
    await enqueuer.close();
    const probe = await db.probe();
    starts.length = 0;
    claims.calls = claims.jobs = 0;
    const meter = await CpuMeter.start(dialect, db.name);
    const names = Array.from({ length: c.groups }, (_, g) => groupKey(g));
    const named: Partial<JobQueueModuleOptions> =
      c.named === 'global'
        ? { limits: { global: 1_000 } }
        : c.named === 'caps'
        ? { limits: { groups: Object.fromEntries(names.map((g) => [g, 5])) } }
        : c.named === 'rates'
          ? { rateLimits: { groups: Object.fromEntries(names.map((g) => [g, { limit: 1_000, intervalMs: 1_000 }])) } }
          : {};
    const worker = await boot(ourOptions(dialect, db.location, { ...(c.prefetch === undefined ? {} : { prefetch: c.prefetch }), ...named }), true);
    try {
      const deadline = Date.now() + 30 * 60_000;
      for (;;) {
        if (starts.length >= total && (await probe.scalar(`SELECT COUNT(*) FROM jobs WHERE state = 'done'`)) === total) break;
        if (Date.now() > deadline) throw new Error(`${c.label}: not finished in 30 minutes`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const end = performance.now();
      const cpu = await meter.stop();
      const t0 = starts[0].at;
      const first = new Map<string, number>();
      for (const s of starts) if (!first.has(s.group)) first.set(s.group, s.at - t0);
      const firsts = [...first.values()];
      // Slots per group while every group still had work: under fair share no group drains before G × (J − 1) starts.
      const window = starts.slice(0, Array.from({ length: c.groups }, (_, g) => weightOf(g) * (c.perGroup - 1)).reduce((a, b) => a + b, 0));
      const slots = new Map<string, number>();
      for (const s of window) slots.set(s.group, (slots.get(s.group) ?? 0) + 1);
      const perWeight = Array.from({ length: c.groups }, (_, g) => (slots.get(groupKey(g)) ?? 0) / weightOf(g));
      const lightMean = perWeight.filter((_, g) => weightOf(g) === 1).reduce((a, b) => a + b, 0) / (c.groups - (c.heavy?.length ?? 0));
      return {
        rate: total / ((end - t0) / 1000),
        firstP50: percentile(firsts, 50),
        firstP99: percentile(firsts, 99),
        firstMax: Math.max(...firsts),
        jain: c.perGroup > 1 ? jain(perWeight) : NaN,
        heavyRatio: c.heavy ? c.heavy.map((g) => slots.get(groupKey(g)) ?? 0).reduce((a, b) => a + b, 0) / c.heavy.length / lightMean : undefined,
        nodeCpu: cpu.nodeUs / total,
        dbCpu: cpu.databaseUs === undefined ? undefined : cpu.databaseUs / total,
        jobsPerClaim: claims.jobs / Math.max(1, claims.calls),
      };
    } finally {
      await worker.close();
    }
  });
}

export const fairShareScale: Scenario = {
  name: 'fair-share-scale',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const failures = new FailureLog();
    const tables: Table[] = [];
    // FAIR_SHARE_DIALECTS=postgres limits the run to some dialects.
    const dialects = (process.env.FAIR_SHARE_DIALECTS ?? 'postgres,mysql,sqlite').split(',') as Dialect[];
    for (const dialect of dialects) {
      const series = new Map<string, RunSeries>();
      const list = cases(dialect, ctx.config.quick);
      for (let run = 1; run <= ctx.config.runs; run++) {
        // Each case's rate is compared with the one-group case of the same run, so a shift in the
        // machine's load between runs cancels out; the median of these per-run ratios is reported.
        // FAIR_SHARE_PAIRED=1 runs the one-group case again right before every other case and
        // compares with that, for a machine whose load drifts within a run.
        const paired = process.env.FAIR_SHARE_PAIRED === '1';
        let oneGroup: number | undefined;
        for (const c of list) {
          try {
            if (paired && c !== list[0]) {
              const base = await runCase(dialect, list[0]);
              oneGroup = base.rate;
              series.get(list[0].label)?.add('rate', base.rate);
            }
            const load = loadavg()[0];
            const r = await runCase(dialect, c);
            const s = series.get(c.label) ?? new RunSeries();
            series.set(c.label, s);
            if (c === list[0]) oneGroup = r.rate;
            s.add('rate', r.rate);
            if (oneGroup) s.add('ratio', r.rate / oneGroup);
            s.add('load', load);
            s.add('p50', r.firstP50);
            s.add('p99', r.firstP99);
            s.add('max', r.firstMax);
            if (Number.isFinite(r.jain)) s.add('jain', r.jain);
            if (r.heavyRatio !== undefined) s.add('heavy', r.heavyRatio);
            s.add('nodeCpu', r.nodeCpu);
            if (r.dbCpu !== undefined) s.add('dbCpu', r.dbCpu);
            s.add('perClaim', r.jobsPerClaim);
            ctx.progress(
              `[${dialect}] ${c.label} run ${run}/${ctx.config.runs} (load ${num(load, 1)}): ${num(r.rate)} jobs/s${oneGroup ? ` (${num(r.rate / oneGroup, 2)}× of one group)` : ''}, first start p50 ${num(r.firstP50)} / p99 ${num(r.firstP99)} / max ${num(r.firstMax)} ms, ` +
                `Jain ${num(r.jain, 3)}${r.heavyRatio !== undefined ? `, heavy ÷ light ${num(r.heavyRatio, 1)}` : ''}, ` +
                `CPU ms/1,000 jobs node ${num(r.nodeCpu)}${r.dbCpu !== undefined ? ` db ${num(r.dbCpu)}` : ''}, ${num(r.jobsPerClaim, 1)} jobs/claim`,
            );
          } catch (err) {
            failures.add(`[${dialect}] ${c.label} run ${run}`, [(err as Error).message]);
          }
        }
      }
      tables.push({
        title: `Fair share at scale, ${dialect} — one worker, concurrency 10, ${JOB_MS} ms jobs, median (min–max) of ${ctx.config.runs} run(s)`,
        columns: ['groups × jobs', 'jobs/s', 'vs 1 group (same run)', 'first start p50 ms', 'p99 ms', 'max ms', 'Jain (slots ÷ weight)', 'heavy ÷ light', 'Node CPU ms / 1,000 jobs', 'PostgreSQL CPU ms / 1,000 jobs', 'jobs per claim', 'load avg at start'],
        rows: list.map((c) => {
          const s = series.get(c.label);
          const rate = s?.get('rate');
          return [
            c.label,
            cell(rate),
            ratioCell(s?.get('ratio')),
            cell(s?.get('p50')),
            cell(s?.get('p99')),
            cell(s?.get('max')),
            cell(s?.get('jain'), 3),
            cell(s?.get('heavy'), 1),
            cell(s?.get('nodeCpu')),
            cell(s?.get('dbCpu')),
            cell(s?.get('perClaim'), 1),
            cell(s?.get('load'), 1),
          ];
        }),
        notes: [
          'jobs/s = jobs ÷ (first handler start → database shows every job done); vs 1 group = median over runs of the rate ÷ the one-group rate of the same run. First start = ms after the first handler start, over groups.',
          'load avg = 1-minute load average of the machine (2 cores, shared) when the case started.',
          "CPU = user + system from the worker's start to the last job done: this process (the worker; the bench's 20 ms count polls too), and on PostgreSQL the backends of the run's database from /proc. Jobs per claim = jobs returned ÷ ClaimService.claim calls (empty ones included).",
          "Jain = Jain's fairness index of each group's slots ÷ its weight over the first Σ weight × (J − 1) starts, while every group still had work (n/a with J = 1).",
        ],
      });
    }
    return {
      name: this.name,
      description: 'Throughput, time to first start per group and fairness of slots with 1 to 100,000 backlogged groups, per dialect.',
      settings: [`one worker in the bench process: concurrency 10, prefetch 10 (default), pollIntervalMs 1000; jobs sleep ${JOB_MS} ms; enqueued before the worker starts, groups interleaved in id order`],
      tables,
      failures: failures.entries,
    };
  },
};

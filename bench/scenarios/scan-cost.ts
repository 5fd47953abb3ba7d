/**
 * scan-cost — does the per-tick cost stay flat as the table grows? For each dialect, on a fresh
 * database holding (a) 1k done rows, (b) 1M done rows, (c) 100k waiting rows of a large DAG
 * (d) 1M ready rows of a type no worker handles (a mixed backlog), (e) 100k ready rows of the
 * worker's own type due tomorrow (scheduled jobs, retries backing off),
 * (filler written with bulk SQL, then ANALYZE), enqueue 1,000 ready no-op jobs and measure
 * 1. claim: ClaimService.claim of 10 at a time until all 1,000 are leased (latency per claim), then
 *    20 claims with nothing due (an idle worker's poll);
 * 2. drain: 1,000 fresh ready jobs, one worker at concurrency 10, first start → all finalized.
 * Reports each case over (a). SCAN_COST_DIALECTS and SCAN_COST_CASES (e.g. a,e) narrow a run. Filler is written once per case; runs repeat the measurements.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialect } from 'nestjs-sql-job-queue';
import { checkRun, FailureLog } from '../lib/correctness';
import { withDatabase, type Probe } from '../lib/databases';
import { ExecutionLog } from '../lib/execution-log';
import { cell, num, ratio } from '../lib/format';
import { analyze, fillDelayed, fillDone, fillReady, fillWaiting } from '../lib/ours/filler';
import { bootEnqueuer, bootOurs, enqueueNoops, ourOptions, type OurApp } from '../lib/ours/our-app';
import { idRange, OurRows, ph } from '../lib/ours/our-rows';
import type { ScenarioReport, Table } from '../lib/report';
import type { BenchContext, Scenario } from '../lib/scenario';
import { percentile, RunSeries } from '../lib/stats';
import { drainTimeout, waitUntilDrained } from '../lib/wait';

interface Case {
  key: 'a' | 'b' | 'c' | 'd' | 'e';
  label: (n: number) => string;
  rows: (quick: boolean) => number;
  fill: (probe: Probe, dialect: Dialect, count: number) => Promise<void>;
}

const ALL_CASES: Case[] = [
  { key: 'a', label: (n) => `(a) ${num(n)} done`, rows: () => 1_000, fill: fillDone },
  { key: 'b', label: (n) => `(b) ${num(n)} done`, rows: (q) => (q ? 20_000 : 1_000_000), fill: fillDone },
  { key: 'c', label: (n) => `(c) ${num(n)} waiting (DAG)`, rows: (q) => (q ? 5_000 : 100_000), fill: fillWaiting },
  { key: 'd', label: (n) => `(d) ${num(n)} ready, other type`, rows: (q) => (q ? 20_000 : 1_000_000), fill: fillReady },
  { key: 'e', label: (n) => `(e) ${num(n)} ready, own type, due tomorrow`, rows: (q) => (q ? 5_000 : 100_000), fill: fillDelayed },
];
const DIALECTS = envList('SCAN_COST_DIALECTS', ['postgres', 'mysql', 'sqlite']) as Dialect[];
const CASES = envList('SCAN_COST_CASES', ['a', 'b', 'c', 'd', 'e']).map((k) => {
  const c = ALL_CASES.find((x) => x.key === k);
  if (!c) throw new Error(`SCAN_COST_CASES: unknown case ${k}`);
  return c;
});

function envList(name: string, all: string[]): string[] {
  const v = process.env[name];
  return v ? v.split(',').map((s) => s.trim()).filter(Boolean) : all;
}
const CLAIM_BATCH = 10;

export const scanCost: Scenario = {
  name: 'scan-cost',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const ready = ctx.config.quick ? 200 : 1_000;
    const failures = new FailureLog();
    const series = new RunSeries();
    for (const dialect of DIALECTS) {
      for (const c of CASES) {
        const count = c.rows(ctx.config.quick);
        const what = `${dialect} ${c.label(count)}`;
        try {
          await withDatabase(dialect, async (db) => {
            const enq = await bootEnqueuer(dialect, db.location);
            try {
              const probe = await db.probe();
              const t0 = Date.now();
              await c.fill(probe, dialect, count);
              await analyze(probe, dialect);
              series.add(`${dialect}:${c.key}:fill`, Date.now() - t0);
              for (let run = 1; run <= ctx.config.runs; run++) {
                const claim = await measureClaims(enq, probe, dialect, ready);
                if (claim.problem) {
                  failures.add(`${what} claim run ${run}`, [claim.problem]);
                  continue;
                }
                const drain = await measureDrain(enq, probe, dialect, db.location, ready);
                ctx.progress(
                  `${what} run ${run}: claim p50 ${num(claim.p50, 2)} ms, p95 ${num(claim.p95, 2)} ms, idle ${num(claim.idle, 2)} ms; drain ${num(drain.ms)} ms${drain.problems.length ? ' FAILED' : ''}`,
                );
                if (drain.problems.length) {
                  failures.add(`${what} drain run ${run}`, drain.problems);
                  continue;
                }
                series.add(`${dialect}:${c.key}:p50`, claim.p50);
                series.add(`${dialect}:${c.key}:p95`, claim.p95);
                series.add(`${dialect}:${c.key}:idle`, claim.idle);
                series.add(`${dialect}:${c.key}:drain`, drain.ms);
              }
            } finally {
              await enq.close();
            }
          });
        } catch (err) {
          failures.add(what, [(err as Error).message]);
        }
      }
    }
    return {
      name: this.name,
      description: 'Claim latency and drain time with 1,000 ready jobs while the table also holds many done or waiting rows.',
      settings: [
        `${num(ready)} ready no-op jobs per measurement; claims of ${CLAIM_BATCH} through ClaimService.claim (start: true, no limits)`,
        'drain: a fresh worker app (concurrency 10, poll 1000 ms) started after the enqueue; first handler start → all finalized',
        'filler: bulk SQL straight into jobs/job_deps (generate_series / recursive CTE / INSERT…SELECT doubling), then VACUUM ANALYZE / ANALYZE TABLE / ANALYZE',
      ],
      tables: [table(ctx, series, ready)],
      failures: failures.entries,
    };
  },
};

/** Claims with nothing due after the 1,000 are leased: an idle worker's polls. */
const IDLE_CLAIMS = 20;

async function measureClaims(enq: OurApp, probe: Probe, dialect: Dialect, ready: number): Promise<{ p50: number; p95: number; idle: number; problem?: string }> {
  const ids = await enqueueNoops(enq.queue, ready);
  const times: number[] = [];
  const claimed = new Set<number>();
  let problem: string | undefined;
  while (claimed.size < ready) {
    const t = performance.now();
    const rows = await enq.claims.claim({ owner: 'bench-claimer', types: ['noop'], quotas: [{ limit: CLAIM_BATCH }], leaseTtlMs: 600_000, start: true });
    times.push(performance.now() - t);
    if (!rows.length) {
      problem = `claim returned nothing with ${ready - claimed.size} jobs still ready`;
      break;
    }
    for (const r of rows) {
      if (claimed.has(r.id)) problem = `job ${r.id} claimed twice`;
      claimed.add(r.id);
    }
  }
  const idle: number[] = [];
  for (let i = 0; i < IDLE_CLAIMS && !problem; i++) {
    const t = performance.now();
    const rows = await enq.claims.claim({ owner: 'bench-claimer', types: ['noop'], quotas: [{ limit: CLAIM_BATCH }], leaseTtlMs: 600_000, start: true });
    idle.push(performance.now() - t);
    if (rows.length) problem = `an idle claim took ${rows.length} job(s) that were not due`;
  }
  const expected = new Set(ids);
  if (!problem && [...claimed].some((id) => !expected.has(id))) problem = 'claimed a job that was not enqueued';
  await deleteRange(probe, dialect, idRange(ids));
  return { p50: percentile(times, 50), p95: percentile(times, 95), idle: percentile(idle, 50), problem };
}

async function measureDrain(enq: OurApp, probe: Probe, dialect: Dialect, url: string, ready: number): Promise<{ ms: number; problems: string[] }> {
  const ids = await enqueueNoops(enq.queue, ready);
  const range = idRange(ids);
  const rows = new OurRows(probe, dialect);
  ExecutionLog.reset();
  const worker = await bootOurs(ourOptions(dialect, url));
  try {
    const end = await waitUntilDrained({
      remaining: () => rows.open(range),
      total: ready,
      timeoutMs: drainTimeout(ready),
      ready: () => ExecutionLog.current.distinct >= ready,
    });
    const executions = ExecutionLog.current.snapshot();
    const verdict = checkRun({ expectedIds: ids, executions, ...(await rows.finalization(range)) });
    return { ms: end - (executions.firstStartAt ?? end), problems: verdict.problems };
  } finally {
    await worker.close();
    await sleep(50);
    await deleteRange(probe, dialect, range);
  }
}

function deleteRange(probe: Probe, dialect: Dialect, [lo, hi]: [number, number]): Promise<unknown> {
  return probe.query(`DELETE FROM jobs WHERE id BETWEEN ${ph(dialect, 1)} AND ${ph(dialect, 2)} AND type = 'noop'`, [lo, hi]);
}

function table(ctx: BenchContext, series: RunSeries, ready: number): Table {
  const rows: string[][] = [];
  for (const dialect of DIALECTS) {
    const base = (m: string) => series.get(`${dialect}:a:${m}`)?.median;
    for (const c of CASES) {
      const get = (m: string) => series.get(`${dialect}:${c.key}:${m}`);
      const vsA = (m: string) => (c.key === 'a' ? '1.00×' : ratio(get(m)?.median, base(m)));
      rows.push([
        dialect,
        c.label(c.rows(ctx.config.quick)),
        cell(get('fill')),
        get('p50') ? cell(get('p50'), 2) : 'FAILED',
        cell(get('p95'), 2),
        cell(get('idle'), 2),
        cell(get('drain')),
        vsA('p50'),
        vsA('idle'),
        vsA('drain'),
      ]);
    }
  }
  return {
    title: `Scan cost — ${num(ready)} ready jobs beside filler rows, median (min–max) of ${ctx.config.runs} run(s)`,
    columns: ['Dialect', 'Table also holds', 'Fill ms', `Claim ${CLAIM_BATCH} p50 ms`, `Claim ${CLAIM_BATCH} p95 ms`, 'Idle claim p50 ms', `Drain ${num(ready)} ms`, 'Claim ÷ (a)', 'Idle ÷ (a)', 'Drain ÷ (a)'],
    rows,
    notes: [
      'Ratios near 1.00× mean the cost stays flat: the claim and the tick never walk done or waiting rows, nor ready rows of types the worker does not handle.',
      `Idle claim: ${IDLE_CLAIMS} claims of ${CLAIM_BATCH} after the ${num(ready)} are leased, nothing due (an idle worker's poll): in (e) it must not walk the jobs due later.`,
    ],
  };
}

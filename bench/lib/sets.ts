import type { Dialect } from 'nestjs-sql-job-queue';
import { warmUpJobs } from './config';
import { FailureLog } from './correctness';
import { cell, num, ratio } from './format';
import { measureLatency, measureThroughput } from './measure';
import type { Table } from './report';
import type { BenchContext } from './scenario';
import { RunSeries } from './stats';
import type { SubjectFactory } from './subject';

/** One row of a comparison: a system with its settings on one dialect. */
export interface SystemSpec {
  key: string;
  label: string;
  dialect: Dialect;
  factory: SubjectFactory;
  /** Runs in a fresh child process per run that warms itself up first (bench/lib/peers/node22.ts). */
  warmsItself?: boolean;
  /** Latency only: a different sample count (e.g. fewer for a polling system) and pause between samples. */
  samples?: number;
  maxGapMs?: number;
}

/**
 * Runs the throughput measurement for every system, `runs` times, interleaving systems within
 * each round so machine noise spreads over all of them. Failed runs are logged and left out.
 */
export async function throughputTable(
  ctx: BenchContext,
  title: string,
  specs: SystemSpec[],
  jobs: number,
  failures: FailureLog,
  /** Our rows: the first gives the enqueue ratio; each gets a process-rate ratio column. */
  oursKeys: string[] = [],
): Promise<Table> {
  const series = new RunSeries();
  // One unrecorded run per system first: a process's first run of a code path runs on a cold
  // JIT (measured: +40-50 µs of Node CPU per job over 20,000 jobs), which favoured every row
  // after the first. BENCH_WARMUP_JOBS=0 turns it off. A system in a child process of its own
  // warms that process before each run instead (`warmsItself`).
  const warmUp = Math.min(jobs, warmUpJobs());
  if (warmUp > 0) {
    for (const spec of specs.filter((s) => !s.warmsItself)) {
      const r = await measureThroughput(spec.dialect, spec.factory, warmUp).catch((err: Error) => ({ warmUpError: err.message }));
      if ('warmUpError' in r) ctx.progress(`${spec.label} [${spec.dialect}] warm-up failed: ${r.warmUpError}`);
    }
  }
  for (let run = 1; run <= ctx.config.runs; run++) {
    // Each run starts one row later: what a position costs (runs late in a process were slower
    // even after the warm-up) falls on every row in turn.
    const order = specs.map((_, i) => specs[(i + run - 1) % specs.length]);
    for (const spec of order) {
      const what = `${spec.label} [${spec.dialect}] run ${run}/${ctx.config.runs}`;
      try {
        const r = await measureThroughput(spec.dialect, spec.factory, jobs);
        const enq = (r.jobs / r.enqueueMs) * 1000;
        const proc = (r.jobs / r.processMs) * 1000;
        ctx.progress(`${what}: enqueue ${num(enq)}/s, process ${num(proc)}/s (${num(r.processMs)} ms)${r.verdict.ok ? '' : ' FAILED'}`);
        if (!r.verdict.ok) {
          failures.add(what, r.verdict.problems);
          continue;
        }
        series.add(`${spec.key}:enq`, enq);
        series.add(`${spec.key}:proc`, proc);
        series.add(`${spec.key}:ms`, r.processMs);
        series.add(`${spec.key}:dup`, r.verdict.duplicates);
        series.add(`${spec.key}:node-us`, r.cpu.nodeUs / r.jobs);
        if (r.cpu.databaseUs !== undefined) series.add(`${spec.key}:db-us`, r.cpu.databaseUs / r.jobs);
        if (r.cpu.workerUs !== undefined) series.add(`${spec.key}:worker-us`, r.cpu.workerUs / r.jobs);
      } catch (err) {
        failures.add(what, [(err as Error).message]);
      }
    }
  }
  const label = (key: string) => specs.find((s) => s.key === key)?.label ?? key;
  const columns = ['System', 'Enqueue jobs/s', 'Process jobs/s', 'Process time ms', 'Re-executions', 'Node CPU µs/job (bench process)'];
  const databaseCpu = specs.some((spec) => series.get(`${spec.key}:db-us`));
  const servers = new Set(specs.map((spec) => spec.dialect));
  // Workers in child processes (peers-node22): the child's own CPU, polled over IPC.
  const workerCpu = specs.some((spec) => series.get(`${spec.key}:worker-us`));
  if (workerCpu) columns.push('Node CPU µs/job (worker process)');
  if (databaseCpu) columns.push(servers.size === 1 && servers.has('mysql') ? 'MariaDB CPU µs/job (whole server)' : servers.size === 1 ? 'PostgreSQL CPU µs/job' : 'database CPU µs/job');
  for (const key of oursKeys) columns.push(`${label(key)} ÷ this (process)`);
  if (oursKeys.length) columns.push(`${label(oursKeys[0])} ÷ this (enqueue)`);
  const oursEnq = oursKeys.length ? series.get(`${oursKeys[0]}:enq`)?.median : undefined;
  const rows = specs.map((spec) => {
    const proc = series.get(`${spec.key}:proc`);
    const row = [
      spec.label,
      cell(series.get(`${spec.key}:enq`)),
      proc ? cell(proc) : 'FAILED',
      cell(series.get(`${spec.key}:ms`)),
      cell(series.get(`${spec.key}:dup`)),
      cell(series.get(`${spec.key}:node-us`)),
    ];
    if (workerCpu) row.push(cell(series.get(`${spec.key}:worker-us`)));
    if (databaseCpu) row.push(cell(series.get(`${spec.key}:db-us`)));
    const ours = oursKeys.includes(spec.key);
    for (const key of oursKeys) row.push(ours ? '—' : ratio(series.get(`${key}:proc`)?.median, proc?.median));
    if (oursKeys.length) row.push(ours ? '—' : ratio(oursEnq, series.get(`${spec.key}:enq`)?.median));
    return row;
  });
  return { title: `${title} — ${num(jobs)} no-op jobs, median (min–max) of ${ctx.config.runs} run(s)`, columns, rows };
}

/** Runs the latency measurement for every system, `runs` times. */
export async function latencyTable(ctx: BenchContext, title: string, specs: SystemSpec[], samples: number, failures: FailureLog): Promise<Table> {
  const series = new RunSeries();
  const counts = new Map<string, number>();
  for (let run = 1; run <= ctx.config.runs; run++) {
    // Each run starts one row later: what a position costs (runs late in a process were slower
    // even after the warm-up) falls on every row in turn.
    const order = specs.map((_, i) => specs[(i + run - 1) % specs.length]);
    for (const spec of order) {
      const what = `${spec.label} [${spec.dialect}] run ${run}/${ctx.config.runs}`;
      const n = Math.min(samples, spec.samples ?? samples);
      counts.set(spec.key, n);
      try {
        const r = await measureLatency(spec.dialect, spec.factory, n, spec.maxGapMs);
        ctx.progress(`${what}: p50 ${num(r.p50, 1)} ms, p95 ${num(r.p95, 1)} ms, max ${num(r.max, 1)} ms${r.verdict.ok ? '' : ' FAILED'}`);
        if (!r.verdict.ok) {
          failures.add(what, r.verdict.problems);
          continue;
        }
        series.add(`${spec.key}:p50`, r.p50);
        series.add(`${spec.key}:p95`, r.p95);
        series.add(`${spec.key}:max`, r.max);
      } catch (err) {
        failures.add(what, [(err as Error).message]);
      }
    }
  }
  const rows = specs.map((spec) => [
    spec.label,
    String(counts.get(spec.key) ?? samples),
    series.get(`${spec.key}:p50`) ? cell(series.get(`${spec.key}:p50`), 1) : 'FAILED',
    cell(series.get(`${spec.key}:p95`), 1),
    cell(series.get(`${spec.key}:max`), 1),
  ]);
  return {
    title: `${title} — enqueue → handler start, ms, median (min–max) of ${ctx.config.runs} run(s)`,
    columns: ['System', 'Samples/run', 'p50 ms', 'p95 ms', 'max ms'],
    rows,
  };
}

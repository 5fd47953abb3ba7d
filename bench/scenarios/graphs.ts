/**
 * graphs — two DAG shapes per dialect with no-op handlers: (1) 100 independent chains of 100;
 * (2) a fan-out of 5,000 jobs from one root, then 100 fan-in jobs of 50 dependencies each.
 * A worker (this process, concurrency 10) is already idle; a separate enqueue-only app
 * enqueues the whole graph with one enqueueGraph call. Reports the enqueue time and the
 * end-to-end time (enqueue call → every job finalized), and checks that every job ran, every row
 * is done, and no job started before all of its dependencies had started.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialect, GraphNode } from 'nestjs-sql-job-queue';
import { checkRun, FailureLog } from '../lib/correctness';
import { withDatabase } from '../lib/databases';
import { ExecutionLog, wallNow } from '../lib/execution-log';
import { cell, num } from '../lib/format';
import { bootEnqueuer, bootOurs, ourOptions } from '../lib/ours/our-app';
import { idRange, OurRows } from '../lib/ours/our-rows';
import type { ScenarioReport, Table } from '../lib/report';
import type { BenchContext, Scenario } from '../lib/scenario';
import { RunSeries } from '../lib/stats';
import { drainTimeout, waitUntilDrained } from '../lib/wait';

interface Shape {
  key: string;
  label: string;
  nodes: GraphNode[];
}

function chains(count: number, length: number): Shape {
  const nodes: GraphNode[] = [];
  for (let c = 0; c < count; c++) {
    for (let i = 0; i < length; i++) nodes.push({ ref: `c${c}_${i}`, type: 'noop', args: {}, dependsOn: i ? [`c${c}_${i - 1}`] : [] });
  }
  return { key: 'chains', label: `${count} chains × ${length}`, nodes };
}

function fanOutFanIn(width: number, fanIns: number): Shape {
  const per = Math.floor(width / fanIns);
  const nodes: GraphNode[] = [{ ref: 'root', type: 'noop', args: {} }];
  for (let i = 0; i < width; i++) nodes.push({ ref: `f${i}`, type: 'noop', args: {}, dependsOn: ['root'] });
  for (let g = 0; g < fanIns; g++) {
    nodes.push({ ref: `g${g}`, type: 'noop', args: {}, dependsOn: Array.from({ length: per }, (_, k) => `f${g * per + k}`) });
  }
  return { key: 'fan', label: `1 → ${num(width)} → ${fanIns} fan-ins of ${per}`, nodes };
}

const DIALECTS: Dialect[] = ['postgres', 'mysql', 'sqlite'];

export const graphs: Scenario = {
  name: 'graphs',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const quick = ctx.config.quick;
    const shapes = quick ? [chains(10, 20), fanOutFanIn(500, 10)] : [chains(100, 100), fanOutFanIn(5_000, 100)];
    const failures = new FailureLog();
    const series = new RunSeries();
    for (let run = 1; run <= ctx.config.runs; run++) {
      for (const dialect of DIALECTS) {
        for (const shape of shapes) {
          const what = `${dialect} ${shape.label} run ${run}/${ctx.config.runs}`;
          try {
            const r = await measureGraph(dialect, shape);
            ctx.progress(`${what}: enqueue ${num(r.enqueueMs)} ms, end-to-end ${num(r.e2eMs)} ms${r.problems.length ? ' FAILED' : ''}`);
            if (r.problems.length) {
              failures.add(what, r.problems);
              continue;
            }
            series.add(`${dialect}:${shape.key}:enq`, r.enqueueMs);
            series.add(`${dialect}:${shape.key}:e2e`, r.e2eMs);
            series.add(`${dialect}:${shape.key}:rate`, (shape.nodes.length / r.e2eMs) * 1000);
          } catch (err) {
            failures.add(what, [(err as Error).message]);
          }
        }
      }
    }
    return {
      name: this.name,
      description: 'Enqueue and end-to-end time of two large DAG shapes per dialect, no-op handlers, concurrency 10.',
      settings: [
        'one enqueueGraph call per graph from an enqueue-only app; an idle in-process worker app (concurrency 10, poll 1000 ms, NOTIFY on PostgreSQL)',
        'correctness: every job executed, every row done, and no job started before each of its dependencies had started',
      ],
      tables: [table(ctx, series, shapes)],
      failures: failures.entries,
    };
  },
};

async function measureGraph(dialect: Dialect, shape: Shape): Promise<{ enqueueMs: number; e2eMs: number; problems: string[] }> {
  return withDatabase(dialect, async (db) => {
    const enq = await bootEnqueuer(dialect, db.location);
    ExecutionLog.reset();
    const worker = await bootOurs(ourOptions(dialect, db.location));
    try {
      const rows = new OurRows(await db.probe(), dialect);
      await sleep(300); // idle
      const t0 = wallNow();
      const out = await enq.queue.enqueueGraph(shape.nodes);
      const enqueueMs = wallNow() - t0;
      const ids = shape.nodes.map((n) => out[n.ref]);
      const range = idRange(ids);
      const end = await waitUntilDrained({
        remaining: () => rows.open(range),
        total: ids.length,
        timeoutMs: drainTimeout(ids.length) * 2,
        ready: () => ExecutionLog.current.distinct >= ids.length,
        what: shape.label,
      });
      const log = ExecutionLog.current;
      const verdict = checkRun({ expectedIds: ids, executions: log.snapshot(), ...(await rows.finalization(range)) });
      const problems = [...verdict.problems];
      let early = 0;
      for (const node of shape.nodes) {
        const mine = log.firstSeq.get(String(out[node.ref]));
        for (const dep of node.dependsOn ?? []) {
          const theirs = log.firstSeq.get(String(out[dep as string]));
          if (mine !== undefined && theirs !== undefined && mine < theirs) early++;
        }
      }
      if (early) problems.push(`${early} jobs started before one of their dependencies`);
      return { enqueueMs, e2eMs: end - t0, problems };
    } finally {
      await worker.close();
      await enq.close();
    }
  });
}

function table(ctx: BenchContext, series: RunSeries, shapes: Shape[]): Table {
  const rows: string[][] = [];
  for (const dialect of DIALECTS) {
    for (const shape of shapes) {
      const get = (m: string) => series.get(`${dialect}:${shape.key}:${m}`);
      rows.push([
        dialect,
        shape.label,
        num(shape.nodes.length),
        cell(get('enq')),
        get('e2e') ? cell(get('e2e')) : 'FAILED',
        cell(get('rate')),
      ]);
    }
  }
  return {
    title: `DAG shapes — median (min–max) of ${ctx.config.runs} run(s)`,
    columns: ['Dialect', 'Shape', 'Jobs', 'Enqueue ms', 'End-to-end ms', 'Jobs/s end-to-end'],
    rows,
    notes: ['End-to-end = enqueueGraph call → database shows every job done (includes the enqueue).'],
  };
}

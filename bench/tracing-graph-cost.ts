/**
 * `node dist/bench/tracing-graph-cost.js [rounds]`: the enqueue cost of one 10,000-node graph
 * (a fan-out: 1 root, 9,999 dependents) on PostgreSQL with tracing off, with a producer span per
 * job, and with one producer span per call, interleaved round by round on one fresh database.
 * Informs the choice of `producerSpans` (README, "Tracing").
 */
import 'reflect-metadata';
import { Client } from 'pg';
import type { GraphNode } from 'nestjs-sql-job-queue';
import { JobQueueTracingModule } from 'nestjs-sql-job-queue/tracing';
import { bootOurs, type OurApp } from './lib/ours/our-app';
import { installBenchTracing } from './lib/ours/tracing-sdk';

const BASE = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NODES = 10_000;

function graph(): GraphNode[] {
  const nodes: GraphNode[] = [{ ref: 'root', type: 'noop' }];
  for (let i = 1; i < NODES; i++) nodes.push({ ref: `n${i}`, type: 'noop', dependsOn: ['root'] });
  return nodes;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const name = `jq_bench_tracing_${process.pid}`;
  const admin = new Client({ connectionString: BASE });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = Object.assign(new URL(BASE), { pathname: `/${name}` }).toString();
  const sdk = installBenchTracing();
  const apps: Record<string, OurApp> = {};
  try {
    const base = { dialect: 'postgres' as const, url, worker: false as const };
    apps.off = await bootOurs(base, false);
    apps['per-job'] = await bootOurs(base, false, [JobQueueTracingModule.forRoot({ producerSpans: 'per-job' })]);
    const results: Record<string, number[]> = { off: [], 'per-job': [], 'per-call': [] };
    for (let round = 0; round <= rounds; round++) {
      for (const mode of Object.keys(results)) {
        // per-call: the per-job app's module swapped for a per-call one would need a second app; boot lazily.
        apps[mode] ??= await bootOurs(base, false, [JobQueueTracingModule.forRoot({ producerSpans: 'per-call' })]);
        const nodes = graph();
        const t0 = process.hrtime.bigint();
        await apps[mode].queue.enqueueGraph(nodes);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (round > 0) results[mode].push(ms); // round 0 warms up
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const off = median(results.off);
    for (const [mode, xs] of Object.entries(results)) {
      console.log(`${mode.padEnd(8)} median ${median(xs).toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(', ')})  ÷ off ${(median(xs) / off).toFixed(2)}×`);
    }
  } finally {
    for (const app of Object.values(apps)) await app.close();
    await sdk.uninstall();
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

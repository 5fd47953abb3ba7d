/**
 * `node dist/bench/observability-cpu.js [jobs]`: the in-process CPU cost per job of the lifecycle
 * reports and the metrics (started + completed per job, as a worker reports them), without any
 * database: what events + metrics add to each job's path, independent of machine load from I/O.
 * Compares against the same loop with no sink registered (the report sites' `active` check only).
 */
import 'reflect-metadata';
import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import type { ClaimedJob } from '../lib/claim/claimed-job';
import type { JobQueueDatabase } from '../lib/database/job-queue.database';
import { JobLifecycle } from '../lib/events/job-lifecycle';
import type { JobQueueEvents } from '../lib/events/job-queue.events';
import { JobQueueMetrics } from '../lib/metrics/job-queue.metrics';
import { resolveMetricsOptions } from '../lib/metrics/metrics.options';

async function run(jobs: number, withMetrics: boolean): Promise<number> {
  const lifecycle = new JobLifecycle({} as JobQueueDatabase, new EventEmitter() as JobQueueEvents);
  if (withMetrics) new JobQueueMetrics(resolveMetricsOptions({ registry: new Registry() }), {} as JobQueueDatabase, lifecycle).onModuleInit();
  const types = ['render', 'fetch', 'mail', 'noop'];
  const start = process.cpuUsage();
  for (let i = 0; i < jobs; i++) {
    const job: ClaimedJob = { id: i, type: types[i & 3], args: null, attempts: 1, maxAttempts: 3, group: 'default', priority: 0, parentId: null, timeoutMs: null };
    const now = Date.now();
    if (lifecycle.active) lifecycle.started(job, now, now - 5);
    if (lifecycle.active) lifecycle.attemptEnded(job, 'done', 3);
    if ((i & 255) === 0) await new Promise((r) => setImmediate(r)); // let the flush run, as the event loop would
  }
  await lifecycle.drain();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) / jobs) * 1000; // ns per job
}

async function main(): Promise<void> {
  const jobs = Number(process.argv[2] ?? 200_000);
  await run(20_000, true); // warm-up
  const rows: string[] = [];
  for (let i = 0; i < 3; i++) {
    const off = await run(jobs, false);
    const on = await run(jobs, true);
    rows.push(`round ${i + 1}: no sink ${off.toFixed(0)} ns/job, events + metrics ${on.toFixed(0)} ns/job (+${(on - off).toFixed(0)} ns)`);
  }
  process.stdout.write(rows.join('\n') + '\n');
}

void main();

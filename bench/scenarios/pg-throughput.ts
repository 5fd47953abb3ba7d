/**
 * pg-throughput — PostgreSQL head to head. For each system, on its own fresh database: enqueue
 * N no-op jobs with its batch API (chunks of 1,000; ours = enqueueGraph of independent nodes,
 * graphile-worker = addJobs, pg-boss = insert) with no worker running, then start one worker
 * (in this process, concurrency 10) and time first handler start → all jobs finalized in the
 * database. Systems: ours, graphile-worker at defaults and at its fastest documented settings,
 * pg-boss at the settings documented in lib/peers/pg-boss.ts. Every run is checked.
 */
import { FailureLog } from '../lib/correctness';
import { ourSubject } from '../lib/ours/subject';
import { GRAPHILE_DEFAULT, GRAPHILE_FAST, graphileSubject } from '../lib/peers/graphile';
import { PGBOSS_DESCRIPTION, bossSubject } from '../lib/peers/pg-boss';
import type { ScenarioReport } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { throughputTable, type SystemSpec } from '../lib/sets';

export const PG_SYSTEMS: SystemSpec[] = [
  { key: 'ours', label: 'ours (defaults)', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue' }) },
  // The counterpart of graphile-worker's fast settings (a local queue of 500).
  { key: 'ours-fast', label: 'ours (prefetch 500)', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue', worker: { prefetch: 500 } }) },
  { key: 'gw-default', label: GRAPHILE_DEFAULT.label, dialect: 'postgres', factory: graphileSubject(GRAPHILE_DEFAULT) },
  { key: 'gw-fast', label: GRAPHILE_FAST.label, dialect: 'postgres', factory: graphileSubject(GRAPHILE_FAST) },
  { key: 'pg-boss', label: 'pg-boss', dialect: 'postgres', factory: bossSubject() },
];

export const PG_SETTINGS = [
  'ours (defaults): nestjs-sql-job-queue, concurrency 10, prefetch 10 (= concurrency), pollIntervalMs 1000, listenNotify on, other options default; enqueue-only app (worker: false) for enqueues',
  'ours (prefetch 500): the same with prefetch 500, so claims and result writes come in batches of hundreds (a crash then re-runs at most 510 attempts per worker)',
  GRAPHILE_DEFAULT.description,
  GRAPHILE_FAST.description,
  PGBOSS_DESCRIPTION,
];

export const pgThroughput: Scenario = {
  name: 'pg-throughput',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { jobs } = standardSizes(ctx);
    const failures = new FailureLog();
    const table = await throughputTable(ctx, 'PostgreSQL throughput', PG_SYSTEMS, jobs, failures, ['ours', 'ours-fast']);
    table.notes = [
      'Process jobs/s = jobs ÷ (first handler start → database shows every job finalized), one worker in the bench process, concurrency 10.',
      'Enqueue jobs/s = batch API in chunks of 1,000, no worker running. Ratios compare medians.',
      'CPU µs/job, processing phase only (worker start → last job finalized): the bench process (the worker under test and the bench\'s drain polling, alike for every system) from process.cpuUsage(), and the PostgreSQL backends of the run\'s database from /proc (bench/workers/db-cpu-sampler.ts). On a shared machine these move far less than jobs/s.',
    ];
    return {
      name: this.name,
      description: 'Enqueue rate and processing rate of no-op jobs on PostgreSQL, ours vs graphile-worker vs pg-boss, each on a fresh database.',
      settings: [`${jobs} jobs per run, chunks of 1,000`, ...PG_SETTINGS],
      tables: [table],
      failures: failures.entries,
    };
  },
};

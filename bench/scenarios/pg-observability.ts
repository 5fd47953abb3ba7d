/**
 * pg-observability — the cost of issue 12's events and metrics on pg-throughput's workload:
 * 20,000 no-op jobs on PostgreSQL, one in-process worker at concurrency 10, enqueued in batches
 * with no worker running, then timed from first handler start to all finalized. Three variants,
 * interleaved run by run (plain, observed, observed + completed listener, plain, …), each on a
 * fresh database: plain (no observability imported), 'metrics' (JobQueueMetricsModule with its
 * own registry + an @OnJobEvent('failed') listener, as the sample app), and 'completed' (the same
 * plus an @OnJobEvent('completed') listener, which makes every flush read the job views).
 */
import { FailureLog } from '../lib/correctness';
import { ourSubject } from '../lib/ours/subject';
import type { ScenarioReport } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { throughputTable, type SystemSpec } from '../lib/sets';

const SYSTEMS: SystemSpec[] = [
  { key: 'plain', label: 'ours (defaults)', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue' }) },
  { key: 'metrics', label: 'ours + metrics + @OnJobEvent(failed)', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue', observe: 'metrics' }) },
  { key: 'completed', label: 'ours + metrics + @OnJobEvent(failed, completed)', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue', observe: 'completed' }) },
];

export const pgObservability: Scenario = {
  name: 'pg-observability',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { jobs } = standardSizes(ctx);
    const failures = new FailureLog();
    const table = await throughputTable(ctx, 'PostgreSQL throughput with observability', SYSTEMS, jobs, failures, ['plain']);
    table.notes = [
      'Same measurement as pg-throughput (ours at defaults). "ours (defaults) ÷ this (process)" above 1 means the variant is slower.',
      'Variants interleave within each run, so load from other work on the machine falls on all of them alike.',
    ];
    return {
      name: this.name,
      description: 'Processing rate of no-op jobs on PostgreSQL with and without lifecycle events and Prometheus metrics.',
      settings: [`${jobs} jobs per run, chunks of 1,000`, 'concurrency 10, prefetch 10, pollIntervalMs 1000, listenNotify on'],
      tables: [table],
      failures: failures.entries,
    };
  },
};

/**
 * pg-ceiling — issue 15 point 2: how close the worker comes to what its own schema allows on
 * PostgreSQL. The ceiling runs the worker's SQL functions in a loop from one and from two
 * connections (claim 500 → complete 500, no Node app in the way: bench/lib/ours/ceiling-subject.ts),
 * and from one at the defaults' batch of 10;
 * the worker runs with `prefetch: 500` (the same batch) and at defaults. Interleaved runs on
 * fresh databases, with CPU per job for both sides.
 */
import { FailureLog } from '../lib/correctness';
import { ceilingSubject } from '../lib/ours/ceiling-subject';
import { ourSubject } from '../lib/ours/subject';
import type { ScenarioReport } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { throughputTable, type SystemSpec } from '../lib/sets';

const SYSTEMS: SystemSpec[] = [
  { key: 'ours-fast', label: 'ours (prefetch 500)', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue', worker: { prefetch: 500 } }) },
  { key: 'ours', label: 'ours (defaults)', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue' }) },
  { key: 'ceiling-1', label: 'SQL loop, 1 connection', dialect: 'postgres', factory: ceilingSubject({ label: 'ceiling', connections: 1, batch: 500 }) },
  { key: 'ceiling-2', label: 'SQL loop, 2 connections', dialect: 'postgres', factory: ceilingSubject({ label: 'ceiling', connections: 2, batch: 500 }) },
  // The defaults claim and complete about 10 jobs a call (concurrency 10, prefetch 10): their ceiling is this one.
  { key: 'ceiling-10', label: 'SQL loop, 1 connection, batch 10', dialect: 'postgres', factory: ceilingSubject({ label: 'ceiling', connections: 1, batch: 10 }) },
];

export const pgCeiling: Scenario = {
  name: 'pg-ceiling',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { jobs } = standardSizes(ctx);
    const failures = new FailureLog();
    const table = await throughputTable(ctx, 'PostgreSQL: the worker against its own SQL in a loop', SYSTEMS, jobs, failures, ['ours-fast', 'ours']);
    table.notes = [
      'SQL loop: each connection calls job_queue_claim for 500 jobs (leased and started in one statement), then job_queue_complete for all 500, until a claim comes back empty; the same functions and the same batch as the worker with prefetch 500, without Nest, handlers, the scheduler or the finalizer. Batch 10: the same loop 10 jobs a call, the batch the defaults claim and complete (ours (defaults) ÷ that row is the defaults\' share of their ceiling).',
      '"ours ÷ this" on a SQL-loop row is the share of the ceiling the worker reaches. The PostgreSQL CPU per job of the loop is the database cost of the schema itself; the worker adds its own statements (lease renewal, sweeps) and smaller batches at defaults.',
      'Enqueue is ours (enqueueGraph in chunks of 1,000) for every row.',
    ];
    return {
      name: this.name,
      description: 'The worker vs the ceiling of its schema: the same SQL functions called in a loop from one and two connections (issue 15 point 2).',
      settings: [`${jobs} no-op jobs per run`, 'ours: concurrency 10, pollIntervalMs 1000, listenNotify on; prefetch 500 or the default (10)'],
      tables: [table],
      failures: failures.entries,
    };
  },
};

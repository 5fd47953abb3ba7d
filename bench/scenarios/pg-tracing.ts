/**
 * pg-tracing — what OpenTelemetry tracing costs (issue 12). pg-throughput's measurement (N no-op
 * jobs enqueued in chunks of 1,000 with no worker, then one in-process worker at concurrency 10
 * drains them), for ours plain and ours with `JobQueueTracingModule.forRoot()` and a real SDK
 * (BasicTracerProvider, BatchSpanProcessor at its defaults, an exporter that drops the spans,
 * AsyncLocalStorage context manager as NodeSDK uses, W3C propagator), at defaults and with prefetch 500, interleaved
 * within each round. Traced runs write a producer span and a carrier per job, get each job's carrier
 * with its claimed row (a separate read only for jobs with upstreams), and write the attempts'
 * carriers per finalize batch.
 */
import { FailureLog } from '../lib/correctness';
import { ourSubject } from '../lib/ours/subject';
import type { ScenarioReport } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { throughputTable, type SystemSpec } from '../lib/sets';

const SYSTEMS: SystemSpec[] = [
  { key: 'ours', label: 'ours (defaults)', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue' }) },
  { key: 'sdk', label: 'ours + SDK, tracing module not imported', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue', tracing: 'sdk-only' }) },
  {
    key: 'sdk-active',
    label: 'ours + SDK, its context manager active, tracing module not imported',
    dialect: 'postgres',
    factory: ourSubject({ label: 'nestjs-sql-job-queue', tracing: 'sdk-active' }),
  },
  { key: 'traced', label: 'ours + tracing', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue traced', tracing: true }) },
  {
    key: 'observed',
    label: 'ours + tracing + metrics + @OnJobEvent(failed)',
    dialect: 'postgres',
    factory: ourSubject({ label: 'nestjs-sql-job-queue traced', tracing: true, observe: 'metrics' }),
  },
  {
    key: 'traced-10',
    label: 'ours + tracing, 10% sampled',
    dialect: 'postgres',
    factory: ourSubject({ label: 'nestjs-sql-job-queue traced', tracing: true, tracingSampleRatio: 0.1 }),
  },
  { key: 'ours-fast', label: 'ours (prefetch 500)', dialect: 'postgres', factory: ourSubject({ label: 'nestjs-sql-job-queue', worker: { prefetch: 500 } }) },
  {
    key: 'traced-fast',
    label: 'ours (prefetch 500) + tracing',
    dialect: 'postgres',
    factory: ourSubject({ label: 'nestjs-sql-job-queue traced', worker: { prefetch: 500 }, tracing: true }),
  },
];

export const pgTracing: Scenario = {
  name: 'pg-tracing',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { jobs } = standardSizes(ctx);
    const failures = new FailureLog();
    // PG_TRACING_SYSTEMS=ours,traced narrows a run to some rows, in that order: the first row of a
    // process runs on a cold JIT, so the plain row first favours the variants after it.
    const only = process.env.PG_TRACING_SYSTEMS?.split(',').filter(Boolean);
    const systems = only ? only.flatMap((k) => SYSTEMS.filter((s) => s.key === k)) : SYSTEMS;
    const plain = ['ours', 'ours-fast'].filter((k) => systems.some((s) => s.key === k));
    const table = await throughputTable(ctx, 'PostgreSQL throughput, tracing off and on', systems, jobs, failures, plain);
    table.notes = [
      'A ratio column is that plain row\'s jobs/s ÷ this row\'s: the traced run\'s cost relative to the plain run (compare a traced row with its own plain row).',
      'Process jobs/s = jobs ÷ (first handler start → database shows every job finalized), one worker in the bench process, concurrency 10.',
    ];
    return {
      name: this.name,
      description: 'The cost of OpenTelemetry tracing with a real SDK: enqueue and processing rate of no-op jobs on PostgreSQL, plain vs traced, interleaved.',
      settings: [
        `${jobs} jobs per run, chunks of 1,000`,
        'SDK, tracing module not imported: the same SDK installed, JobQueueTracingModule not imported: the SDK\'s own cost while nothing has run in a context',
        'SDK, context manager active: the same, after one context.with() (what an app\'s first traced request does): from then on Node 20\'s AsyncLocalStorage hook costs every promise of the process',
        '10% sampled: ParentBasedSampler(TraceIdRatioBasedSampler(0.1)), the usual production head sampling; carriers are stored and claimed all the same',
        'tracing + metrics + @OnJobEvent(failed): all of issue 12 as the sample app wires it (JobQueueMetricsModule with its own registry, a failed listener), traced',
        'tracing: JobQueueTracingModule.forRoot() (defaults: a producer span per enqueue call, a consumer span per attempt), @opentelemetry/sdk-trace-base BasicTracerProvider + BatchSpanProcessor (defaults) + a dropping exporter, AsyncLocalStorageContextManager, W3C propagator; installed only for the traced runs',
      ],
      tables: [table],
      failures: failures.entries,
    };
  },
};

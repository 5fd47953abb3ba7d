/**
 * mysql — ours on MariaDB (no Node peer runs there). Throughput: the pg-throughput procedure
 * (enqueueGraph in chunks of 1,000 with no worker, then one in-process worker at concurrency 10,
 * first handler start → all finalized). Latency: an idle worker, sequential single-job enqueues,
 * (a) through the worker's own app (in-process wake) and (b) from a separate enqueue-only app,
 * which MariaDB cannot notify: the worker finds the job at its next poll (250 ms here, so the
 * figure is about half the interval by construction; fewer samples, pauses up to one interval).
 */
import { FailureLog } from '../lib/correctness';
import { ourSubject } from '../lib/ours/subject';
import type { ScenarioReport } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { latencyTable, throughputTable, type SystemSpec } from '../lib/sets';
import type { Dialect } from 'nestjs-sql-job-queue';

export const POLL_BOUND_MS = 250;

/** Throughput + latency rows of ours on a dialect without LISTEN/NOTIFY. */
export function pollingDialectLatencySpecs(dialect: Dialect, pollingSamples: number): SystemSpec[] {
  return [
    {
      key: 'ours-local',
      label: 'nestjs-sql-job-queue (enqueue in worker app)',
      dialect,
      factory: ourSubject({ label: 'ours (local)', enqueueViaWorker: true }),
    },
    {
      key: 'ours-poll',
      label: `nestjs-sql-job-queue (separate enqueuer, poll ${POLL_BOUND_MS} ms)`,
      dialect,
      factory: ourSubject({ label: 'ours (separate)', worker: { pollIntervalMs: POLL_BOUND_MS } }),
      samples: pollingSamples,
      maxGapMs: POLL_BOUND_MS,
    },
  ];
}

export const mysqlScenario: Scenario = {
  name: 'mysql',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { jobs, samples, pollingSamples } = standardSizes(ctx);
    const failures = new FailureLog();
    const throughput = await throughputTable(
      ctx,
      'MariaDB throughput',
      [
        { key: 'ours', label: 'ours (defaults)', dialect: 'mysql', factory: ourSubject({ label: 'ours' }) },
        { key: 'ours-fast', label: 'ours (prefetch 500)', dialect: 'mysql', factory: ourSubject({ label: 'ours', worker: { prefetch: 500 } }) },
      ],
      jobs,
      failures,
    );
    const latency = await latencyTable(ctx, 'MariaDB latency', pollingDialectLatencySpecs('mysql', pollingSamples), samples, failures);
    latency.notes = [`A separate enqueuer cannot wake a MariaDB worker; the job waits for the next poll (${POLL_BOUND_MS} ms here, default 1000 ms).`];
    return {
      name: this.name,
      description: 'Throughput and latency of ours on MariaDB.',
      settings: [
        `${jobs} jobs per throughput run, ${samples} latency samples (${pollingSamples} for the polling configuration)`,
        'nestjs-sql-job-queue: concurrency 10, pollIntervalMs 1000 unless stated, other options default',
      ],
      tables: [throughput, latency],
      failures: failures.entries,
    };
  },
};

/**
 * sqlite — ours on SQLite head to head with plainjob 0.0.14. Throughput: enqueue N no-op jobs
 * with each batch API (ours enqueueGraph, plainjob addMany; chunks of 1,000), then start 1 or 2
 * worker processes on the one file (child processes; ours at concurrency 10 each, plainjob with
 * 10 workers each) and time first handler start → all finalized. Latency: idle worker in this
 * process; ours with an in-process wake and with a separate enqueuer (poll 250 ms), plainjob
 * (its add() never wakes a worker; poll 250 ms).
 */
import { FailureLog } from '../lib/correctness';
import { ourSubject } from '../lib/ours/subject';
import { PLAINJOB_WORKERS_PER_PROCESS, plainjobSubject } from '../lib/peers/plainjob';
import type { ScenarioReport } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { latencyTable, throughputTable, type SystemSpec } from '../lib/sets';
import { POLL_BOUND_MS, pollingDialectLatencySpecs } from './mysql';

function throughputSpecs(processes: number): SystemSpec[] {
  const s = processes === 1 ? '' : 'es';
  return [
    { key: 'ours', label: `ours (defaults), ${processes} process${s}`, dialect: 'sqlite', factory: ourSubject({ label: 'ours', processes }) },
    {
      key: 'ours-fast',
      label: `ours (prefetch 500), ${processes} process${s}`,
      dialect: 'sqlite',
      factory: ourSubject({ label: 'ours', processes, worker: { prefetch: 500 } }),
    },
    {
      key: 'plainjob',
      label: `plainjob, ${processes} process${s}`,
      dialect: 'sqlite',
      factory: plainjobSubject({ label: 'plainjob', processes, pollIntervall: 1000 }),
    },
  ];
}

export const sqliteScenario: Scenario = {
  name: 'sqlite',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { jobs, samples, pollingSamples } = standardSizes(ctx);
    const failures = new FailureLog();
    const one = await throughputTable(ctx, 'SQLite throughput, 1 worker process', throughputSpecs(1), jobs, failures, ['ours', 'ours-fast']);
    const two = await throughputTable(ctx, 'SQLite throughput, 2 worker processes on one file', throughputSpecs(2), jobs, failures, ['ours', 'ours-fast']);
    const latencySpecs: SystemSpec[] = [
      ...pollingDialectLatencySpecs('sqlite', pollingSamples),
      {
        key: 'plainjob',
        label: `plainjob (poll ${POLL_BOUND_MS} ms)`,
        dialect: 'sqlite',
        factory: plainjobSubject({ label: 'plainjob', processes: 0, pollIntervall: POLL_BOUND_MS }),
        samples: pollingSamples,
        maxGapMs: POLL_BOUND_MS,
      },
    ];
    const latency = await latencyTable(ctx, 'SQLite latency', latencySpecs, samples, failures);
    latency.notes = [`Neither a separate enqueuer of ours nor plainjob's add() wakes an idle worker; both wait for the next poll (${POLL_BOUND_MS} ms here).`];
    return {
      name: this.name,
      description: 'Throughput (1 and 2 worker processes on one file) and latency on SQLite, ours vs plainjob 0.0.14.',
      settings: [
        `${jobs} jobs per throughput run, chunks of 1,000; ${samples} latency samples (${pollingSamples} for polling configurations)`,
        'nestjs-sql-job-queue: concurrency 10 per process, pollIntervalMs 1000 unless stated, WAL (the library sets it), other options default',
        `plainjob 0.0.14: ${PLAINJOB_WORKERS_PER_PROCESS} defineWorker loops per process on one queue (one job at a time each), pollIntervall 1000 ms for throughput; its own pragmas (WAL, synchronous NORMAL)`,
        'plainjob keeps no lease and no attempt limit, and its timeout can re-run a live job; ours keeps every guarantee while measured',
      ],
      tables: [one, two, latency],
      failures: failures.entries,
    };
  },
};

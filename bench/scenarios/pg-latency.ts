/**
 * pg-latency — an idle worker on PostgreSQL; sequential single-job enqueues from a separate
 * client (each after a random 0–50 ms pause); latency = just before the enqueue call → the
 * handler starts (same process, same clock). Ours is measured with the enqueue coming from a
 * separate enqueue-only app (the wake-up travels through LISTEN/NOTIFY, poll 1000 ms as
 * backstop) and from the worker's own app (in-process wake). graphile-worker wakes through
 * LISTEN/NOTIFY; pg-boss 10 only polls (10 loops at the 0.5 s minimum interval).
 */
import { FailureLog } from '../lib/correctness';
import { ourSubject } from '../lib/ours/subject';
import { GRAPHILE_DEFAULT, GRAPHILE_FAST, graphileSubject } from '../lib/peers/graphile';
import { bossSubject } from '../lib/peers/pg-boss';
import type { ScenarioReport } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { latencyTable, type SystemSpec } from '../lib/sets';
import { PG_SETTINGS } from './pg-throughput';

const SYSTEMS: SystemSpec[] = [
  { key: 'ours', label: 'nestjs-sql-job-queue (separate enqueuer, NOTIFY)', dialect: 'postgres', factory: ourSubject({ label: 'ours' }) },
  {
    key: 'ours-local',
    label: 'nestjs-sql-job-queue (enqueue in worker app)',
    dialect: 'postgres',
    factory: ourSubject({ label: 'ours (local)', enqueueViaWorker: true }),
  },
  { key: 'gw-default', label: GRAPHILE_DEFAULT.label, dialect: 'postgres', factory: graphileSubject(GRAPHILE_DEFAULT) },
  { key: 'gw-fast', label: GRAPHILE_FAST.label, dialect: 'postgres', factory: graphileSubject(GRAPHILE_FAST) },
  // Polls only: pauses up to one interval so samples land at random phases of its loops.
  { key: 'pg-boss', label: 'pg-boss (polls every 0.5 s)', dialect: 'postgres', factory: bossSubject(), samples: 50, maxGapMs: 500 },
];

export const pgLatency: Scenario = {
  name: 'pg-latency',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const { samples } = standardSizes(ctx);
    const failures = new FailureLog();
    const table = await latencyTable(ctx, 'PostgreSQL latency', SYSTEMS, samples, failures);
    table.notes = [
      'Idle worker, one job at a time; 5 unrecorded warm-up jobs per run; a random 0–50 ms pause before each enqueue.',
      'pg-boss 10 has no LISTEN/NOTIFY: its latency is set by the polling of its 10 work() loops (0.5 s each, which run nearly in step);',
      'it gets 50 samples with a random 0–500 ms pause each, so that jobs arrive at random points of the polling cycle.',
    ];
    return {
      name: this.name,
      description: 'Enqueue → handler start latency on PostgreSQL with an idle worker.',
      settings: [`${samples} samples per run (pg-boss: ${Math.min(samples, 50)})`, ...PG_SETTINGS],
      tables: [table],
      failures: failures.entries,
    };
  },
};

import type { BenchConfig } from './config';
import type { ScenarioReport } from './report';

export interface BenchContext {
  config: BenchConfig;
  /** A progress line on the console (not in the report). */
  progress(message: string): void;
}

/** One scenario: a name for --scenario, and a run that returns its tables. */
export interface Scenario {
  name: string;
  run(ctx: BenchContext): Promise<ScenarioReport>;
}

/**
 * The sizes the throughput and latency scenarios share: the 20,000-job and 200-sample runs of
 * issue 5 (or --jobs / --samples), smaller with --quick; polling configurations get fewer samples
 * because each one waits for a poll.
 */
export function standardSizes(ctx: BenchContext): { jobs: number; samples: number; pollingSamples: number } {
  const quick = ctx.config.quick;
  return {
    jobs: ctx.config.jobs ?? (quick ? 2_000 : 20_000),
    samples: ctx.config.samples ?? (quick ? 20 : 200),
    pollingSamples: quick ? 10 : 50,
  };
}

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

import type { SettledJob } from '../finalize/settled-job';

export interface SweepResult {
  /** Back to `ready` for another attempt. */
  retried: number[];
  /** Now terminal (failed, plus anything the cascade settled). */
  settled: SettledJob[];
  promoted: number;
}

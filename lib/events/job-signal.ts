import type { JobView } from '../job.types';
import type { JobEventName } from './job-event.types';

/**
 * One committed lifecycle change, as the core reports it to the in-process sinks (the
 * `@OnJobEvent` dispatcher, the metrics). Only what the reporting code already has in memory:
 * the job view is read later, in a batch, and only if a sink asks for it.
 */
export interface JobSignal {
  event: JobEventName;
  id: number;
  /** Known when the reporting code had it (every worker event, enqueue); else read with the view. */
  type?: string;
  group?: string;
  /** Date.now() at the report (just after the commit). */
  at: number;
  attempt?: number;
  error?: string;
  /** Handler run time of the attempt, ms. */
  durationMs?: number;
  /** `snoozed`: ms until the job runs again. */
  delayMs?: number;
  /** `started`: ms from when the job became claimable (run_after) to this start; absent if unknown. */
  waitMs?: number;
  percent?: number;
  stage?: string | null;
  /** Filled by the enqueue that returns it anyway, or by the batched read. */
  view?: JobView;
}

/** An in-process consumer of signals (see JobLifecycle.addSink). */
export interface JobSignalSink {
  /** True if `deliver` needs `signal.view` (and so `type`) for this event. */
  needsView(event: JobEventName): boolean;
  /** True if `deliver` needs `signal.type` for this event (read with the view when the reporter lacked it). */
  needsType(event: JobEventName): boolean;
  /** Called after the commit, off the hot path, in commit order per job. Must not throw (it is caught and logged). */
  deliver(signals: readonly JobSignal[]): void;
}

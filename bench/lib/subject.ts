import type { BenchDatabase } from './databases';
import type { ExecutionSnapshot } from './execution-log';

/**
 * One queue system under test on one fresh database, behind the few verbs the measurements
 * need. Each system (ours on a dialect, graphile-worker, pg-boss, plainjob) implements it with
 * its own public API.
 */
export interface Subject {
  readonly label: string;
  /** Schema and connections; not timed. */
  prepare(): Promise<void>;
  /** The system's batch enqueue API; returns the job ids. */
  enqueue(count: number): Promise<Array<string | number>>;
  /** One job through the system's single-job API, tagged for the latency probe; returns its id. */
  enqueueOne(tag: number): Promise<string | number>;
  /** Starts the worker(s); processing may begin at once. */
  startWorker(): Promise<void>;
  /** Jobs not yet finalized (cheap enough to poll). */
  open(): Promise<number>;
  /** For the correctness check: successful finalizations vs anything else, from the database. */
  finalization(): Promise<{ finalized: number; notFinalized: number }>;
  /** Handler executions seen by the worker(s). */
  executions(): Promise<ExecutionSnapshot>;
  /** Cheap in-process hint that every handler has started (holds off database polling). */
  allStarted?(expected: number): boolean;
  /** Worker in a child process: its CPU time so far (user + system, µs), for CPU per job. */
  workerCpuUs?(): Promise<number>;
  close(): Promise<void>;
}

export type SubjectFactory = (db: BenchDatabase) => Subject;

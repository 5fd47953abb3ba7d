import type { RunOutcome } from '../handlers/run-job';

/**
 * Injection token of an optional `JobQueueInstrumentation`. Nothing in the core provides it; an
 * optional part (`nestjs-sql-job-queue/tracing`) does. With none registered the queue takes its
 * usual paths: no carrier is written, no extra read at claim, no extra write at finalize.
 */
export const JOB_QUEUE_INSTRUMENTATION = Symbol('JOB_QUEUE_INSTRUMENTATION');

/** A job about to be written by `enqueue` / `enqueueGraph`, in input order. */
export interface InstrumentedEnqueueJob {
  type: string;
  group: string;
  /** The graph ref (`'job'` for a single `enqueue`). */
  ref: string;
  /** A container node: it never runs, so it has no attempts to link. */
  container: boolean;
}

/** What an instrumentation keeps for one enqueue call. */
export interface EnqueueInstrumentation {
  /**
   * One opaque string per job (or null), stored in the job's `trace_context` column and handed
   * back at each attempt (`AttemptTrace.created`). At most 4,000 characters.
   */
  readonly carriers: ReadonlyArray<string | null>;
  /** The enqueue committed (`ids` in input order) or threw (`ids` null). Must not throw. */
  end(ids: readonly number[] | null, error?: unknown): void;
}

/** The claimed attempt an instrumentation wraps. */
export interface InstrumentedAttempt {
  id: number;
  type: string;
  group: string;
  /** 1 for the first attempt. */
  attempts: number;
  maxAttempts: number;
}

/** The stored carriers an attempt can link to, read once per claimed batch. */
export interface AttemptTrace {
  /** The job's own carrier: its enqueue's (written by `onEnqueue`). */
  created: string | null;
  /** The carriers of the jobs it depends on: each upstream's completed attempt (see `AttemptOutcome`). */
  upstream: ReadonlyArray<{ id: number; carrier: string }>;
}

/** An attempt's outcome; a completed attempt may leave a carrier for its dependents to link to. */
export type AttemptOutcome = RunOutcome & { carrier?: string | null };

/**
 * Hooks the queue calls when one is registered under `JOB_QUEUE_INSTRUMENTATION`. Kept free of
 * any tracing library's types so the core never imports one.
 */
export interface JobQueueInstrumentation {
  /** Before the enqueue writes; undefined to write no carriers. Must not throw. */
  onEnqueue(jobs: readonly InstrumentedEnqueueJob[]): EnqueueInstrumentation | undefined;
  /**
   * Runs one attempt (`run` never rejects; it resolves with the outcome). The instrumentation
   * may run it inside its own context and must resolve with the same outcome.
   */
  runAttempt(job: InstrumentedAttempt, trace: AttemptTrace, run: () => Promise<RunOutcome>): Promise<AttemptOutcome>;
  /**
   * Whether attempts record anything now. False: a claim reads no stored carriers for them (its
   * attempts still go through `runAttempt`, with none). Absent: always true.
   */
  recording?(): boolean;
  /**
   * A line `ctx.log()` stored for the attempt, called at once in the handler's own context (the
   * attempt's span, or a span of the user's inside it, is the active one). Must not throw.
   */
  onLog?(line: { id: number; attempt: number; message: string }): void;
}

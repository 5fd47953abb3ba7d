import { InvalidJobError } from '../errors';
import { isStorableText, STORABLE_TEXT } from '../options/storable-text';
import type { JobUpstream } from '../typing/job-types';
import { logLimitNotice, logMessageText, type PendingLogLine } from '../logs/log-line';
import { SnoozeJobError } from './job-abort.errors';

/** What a JobContext needs from the engine; kept narrow so the context is easy to fake in unit tests. */
export interface JobContextIO {
  progress(jobId: number, percent: number, stage: string | null): Promise<void>;
  upstream(jobId: number): Promise<Record<string, unknown>>;
  upstreamFailures(jobId: number): Promise<Record<string, UpstreamFailure>>;
  /** Queues one line of the job's log; never throws (see LogWrites). */
  log(jobId: number, line: PendingLogLine): void;
  /** Lines one attempt may log (option `maxLogLines`). */
  readonly maxLogLines: number;
}

/** An upstream that did not succeed, as `ctx.upstreamFailures()` gives it. */
export interface UpstreamFailure {
  id: number;
  state: 'failed' | 'cancelled';
  /** Its `lastError`: the error of its last attempt, or why it was cancelled. */
  error: string | null;
}

/** The claimed attempt a context describes. */
export interface JobContextInit {
  id: number;
  type: string;
  attempts: number;
  maxAttempts: number;
  group: string;
  parentId: number | null;
}

/**
 * The second argument of every `@JobHandler` method.
 *
 * `signal` aborts when the job is cancelled, times out, loses its lease to another worker, or
 * the process shuts down past its grace period: pass it to fetch() and database calls, or check
 * `signal.aborted` between steps. After an abort the result is not stored.
 */
export class JobContext<TType extends string = string> {
  readonly id: number;
  readonly type: TType;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly group: string;
  readonly parentId: number | null;
  /** Lines this attempt has logged (one past the limit once its notice is written). */
  private logged = 0;

  constructor(
    init: JobContextInit,
    private readonly aborter: { readonly signal: AbortSignal },
    private readonly io: JobContextIO,
  ) {
    this.id = init.id;
    this.type = init.type as TType;
    this.attempt = init.attempts;
    this.maxAttempts = init.maxAttempts;
    this.group = init.group;
    this.parentId = init.parentId;
  }

  /** Aborted on cancel, timeout, lost lease or forced shutdown (made on first read). */
  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** Persists progress (0–100) and, optionally, the current stage; shown by `get()` and `stats()`. */
  async progress(percent: number, stage?: string): Promise<void> {
    if (typeof percent !== 'number' || !Number.isFinite(percent)) {
      throw new InvalidJobError('progress', 'a number from 0 to 100', percent);
    }
    if (stage !== undefined && (typeof stage !== 'string' || stage.length > 200 || !isStorableText(stage))) {
      throw new InvalidJobError('stage', `a string of at most 200 characters ${STORABLE_TEXT}`, stage);
    }
    await this.io.progress(this.id, Math.round(Math.min(100, Math.max(0, percent))), stage ?? null);
  }

  /**
   * Appends a line to the job's log, with this attempt's number and the time: read it with
   * `JobQueueService.getLogs(id)` or on the dashboard's job page. Not awaited: lines are written
   * in the background, a statement per burst, and every line logged before the handler returns
   * is stored before its result. Any value is stored as `String()` gives it, cut to 2,000
   * characters; an attempt stores at most `maxLogLines` lines (default 1,000), then a notice.
   * A line that cannot be written is dropped with a warning: logging never fails the job.
   */
  log(message: string): void {
    const max = this.io.maxLogLines;
    if (this.logged > max) return;
    const at = new Date();
    if (this.logged++ === max) {
      if (max > 0) this.io.log(this.id, { attempt: this.attempt, at, message: logLimitNotice(max) });
      return;
    }
    this.io.log(this.id, { attempt: this.attempt, at, message: logMessageText(message) });
  }

  /**
   * Ends this attempt and runs the job again after `delayMs`, without spending an attempt:
   * `return ctx.snooze(30_000)` when the work is not ready yet. Throws `SnoozeJobError` (so a
   * surrounding `catch` must let it through); throws `InvalidJobError` for a delay that is not
   * 0 to 365 days, which fails the attempt like any handler error.
   */
  snooze(delayMs: number): never {
    throw new SnoozeJobError(delayMs);
  }

  /**
   * Results of the jobs this one depends on, each once: keyed by the upstream's graph ref, or
   * by its id (as a string) when it was enqueued without one (e.g. a numeric `dependsOn`).
   * Typed from `JobTypes[type].upstream` when declared, else by the type argument you pass.
   */
  upstream<T extends Record<string, unknown> = JobUpstream<TType>>(): Promise<T> {
    return this.io.upstream(this.id) as Promise<T>;
  }

  /**
   * The jobs this one depends on that failed or were cancelled, keyed as in `upstream()` (their
   * result there is `null`). Only a job that waits for them with `allowFailure: true` runs after
   * one: for any other, this is `{}`.
   */
  upstreamFailures(): Promise<Record<string, UpstreamFailure>> {
    return this.io.upstreamFailures(this.id);
  }
}

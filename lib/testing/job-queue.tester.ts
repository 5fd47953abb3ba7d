import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { JobQueueDatabase } from '../database/job-queue.database';
import { InvalidOptionError } from '../errors';
import { JobLifecycle } from '../events/job-lifecycle';
import { JobQueueEvents } from '../events/job-queue.events';
import { JobContext, type UpstreamFailure } from '../handlers/job-context';
import { JobHandlerRegistry } from '../handlers/job-handler.registry';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { JobQueueService } from '../job-queue.service';
import { WorkerVitals } from '../scheduler/worker-vitals';
import type { JobArgs, JobResult, JobTypeName } from '../typing/job-types';
import { countByState, readOpenWork, runDelayedNow, type OpenWork } from './drain.sql';
import { explainOpenWork } from './explain-open-work';
import { DrainStuckError, DrainTimeoutError, TestingHandlerNotFoundError, type StuckWork } from './testing.errors';

export interface DrainOptions {
  /** Give up with `DrainTimeoutError` after this long. Default 10 s. */
  timeoutMs?: number;
  /** Run delayed jobs (`runAfter`, retry backoff) now instead of waiting for them. Default true. */
  runDelayed?: boolean;
}

export interface RunOptions {
  /** What `ctx.upstream()` returns. Default `{}`. */
  upstream?: Record<string, unknown>;
  /** What `ctx.upstreamFailures()` returns. Default `{}`. */
  upstreamFailures?: Record<string, UpstreamFailure>;
  /** `ctx.attempt`. Default 1. */
  attempt?: number;
  /** Aborts `ctx.signal`, to test how the handler reacts to cancel or timeout. */
  signal?: AbortSignal;
}

/** What `run()` saw besides the result. */
export interface RunRecord {
  progress: Array<{ percent: number; stage: string | null }>;
  /** Lines the handler logged with `ctx.log()`, as they would be stored (cut, the limit applied). */
  logs: string[];
}

/**
 * Runs the queue to completion inside a test. `drain()` lets the module's own worker (the real
 * claim, dispatch and finalize) run every runnable job, including dependents that become ready
 * and retries, until nothing is ready or running; `run()` calls one handler directly.
 */
@Injectable()
export class JobQueueTester {
  /** Progress reported and lines logged by the handler during the last `run()`. */
  readonly lastRun: RunRecord = { progress: [], logs: [] };

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly queue: JobQueueService,
    private readonly db: JobQueueDatabase,
  ) {}

  /** The module's `maxLogLines`, which `run()` applies as the worker does. */
  private get maxLogLines(): number {
    return this.moduleRef.get<ResolvedJobQueueOptions>(JOB_QUEUE_OPTIONS, { strict: false }).maxLogLines;
  }

  private get registry(): JobHandlerRegistry {
    return this.moduleRef.get(JobHandlerRegistry, { strict: false });
  }

  /**
   * Waits until no job is ready (or delayed, with `runDelayed`), leased or running. Resolves with
   * the count of jobs per state. Throws `DrainStuckError` at once when what is left can never run
   * here (a type without a handler, a paused type or group), and `DrainTimeoutError` after `timeoutMs`.
   */
  async drain(options: DrainOptions = {}): Promise<Record<string, number>> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    // A NaN deadline is never passed: drain() would wait forever for a handler that never resolves.
    if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) throw new InvalidOptionError('drain.timeoutMs', 'a non-negative number of ms', timeoutMs);
    const deadline = Date.now() + timeoutMs;
    const events = this.moduleRef.get(JobQueueEvents, { strict: false });
    const vitals = this.moduleRef.get(WorkerVitals, { strict: false });
    for (;;) {
      // While the worker runs jobs the queue is not drained yet: nothing to read or write. Reading
      // the open work (a GROUP BY over every open job, on SQLite in the worker's own thread)
      // every 5 ms took the worker's turns: 30,000 jobs drained in 28.5 s, 3.4 s without it. The
      // delayed jobs' UPDATE, a write over the ready rows, waits too: they run once it is idle.
      if (vitals.inFlight > 0 && Date.now() <= deadline) {
        await sleep(5);
        continue;
      }
      const readAt = Date.now();
      // One transaction: a job that started after the check above and failed, its retry written
      // between the two statements, was neither made claimable nor open (a later run_after), and
      // drain() returned with it still to run (CI: the README's Jest example, 1 attempt of 2).
      const open = await this.db.transaction(async (tx) => {
        if (options.runDelayed ?? true) await runDelayedNow(tx);
        return readOpenWork(tx);
      });
      if (!open.length) {
        // @OnJobEvent listeners have heard about every change by the time drain resolves.
        await this.moduleRef.get(JobLifecycle, { strict: false }).drain();
        return countByState(this.db);
      }
      const explained = await this.explain(open);
      if (explained.every((w) => w.blocked)) throw new DrainStuckError(explained);
      if (Date.now() > deadline) throw new DrainTimeoutError(timeoutMs, explained);
      events.wake();
      // Paced: the read and its explanation take at most a fifth of the time, however many jobs are open.
      await sleep(Math.max(5, 4 * (Date.now() - readAt)));
    }
  }

  /** Makes delayed jobs (runAfter in the future, retry backoff) claimable now; returns how many. */
  runDelayedNow(): Promise<number> {
    return runDelayedNow(this.db);
  }

  /**
   * Calls the `@JobHandler` of `type` once with `args` and a real `JobContext` (its signal,
   * progress and upstream work; nothing is written to the queue) and returns its result.
   * A handler's schema applies as in a worker.
   */
  async run<T extends JobTypeName>(type: T, args?: JobArgs<T>, options: RunOptions = {}): Promise<JobResult<T>> {
    const handler = this.registry.get(type);
    if (!handler) throw new TestingHandlerNotFoundError(type, this.registry.types());
    this.lastRun.progress = [];
    this.lastRun.logs = [];
    const aborter = new AbortController();
    // A signal aborted before the call aborts ctx.signal too (its 'abort' event has been and gone),
    // and the listener goes with the call: a test-wide signal kept one per run (and its context).
    const signal = options.signal;
    const follow = () => aborter.abort(signal!.reason);
    if (signal?.aborted) follow();
    else signal?.addEventListener('abort', follow, { once: true });
    const attempt = options.attempt ?? 1;
    const ctx = new JobContext(
      { id: 0, type, attempts: attempt, maxAttempts: Math.max(attempt, handler.options.maxAttempts ?? 1), group: 'default', parentId: null },
      aborter,
      {
        progress: async (_id, percent, stage) => void this.lastRun.progress.push({ percent, stage }),
        upstream: async () => options.upstream ?? {},
        upstreamFailures: async () => options.upstreamFailures ?? {},
        log: (_id, line) => void this.lastRun.logs.push(line.message),
        maxLogLines: this.maxLogLines,
      },
    );
    try {
      return (await handler.handle(args, ctx)) as JobResult<T>;
    } finally {
      signal?.removeEventListener('abort', follow);
    }
  }

  private async explain(open: readonly OpenWork[]): Promise<Array<StuckWork & { blocked: boolean }>> {
    return explainOpenWork(open, await this.queue.listPaused(), (type) => this.registry.get(type) !== undefined);
  }

}

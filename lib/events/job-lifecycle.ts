import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ClaimedJob } from '../claim/claimed-job';
import { JobQueueDatabase } from '../database/job-queue.database';
import { LIST_CHUNK } from '../database/sql';
import type { SettledJob } from '../finalize/settled-job';
import { AppTransactionSignals } from './app-transaction-signals';
import { JobQueueEvents } from './job-queue.events';
import type { JobSignal, JobSignalSink } from './job-signal';
import { readJobTypes, readJobViews } from './job-views.sql';

const SETTLED_EVENT = { done: 'completed', failed: 'failed', cancelled: 'cancelled' } as const;
const ATTEMPT_EVENT = { done: 'completed', retried: 'retrying', failed: 'failed', snoozed: 'snoozed' } as const;
/**
 * When a sink needs job views, reports are gathered this long before each read, so that one read
 * serves many jobs (per setImmediate it was one query per finalize batch: ~40% of a no-op job's
 * throughput with a `completed` listener). Without views, a flush follows the next turn.
 */
const VIEW_BATCH_MS = 25;
/**
 * A flush reads and delivers views a slice at a time, each read aiming at this many characters
 * of args and results: a cancelMany of 20,000 jobs with 10 KB args held all 20,000 views at once
 * (500 MB of heap, the first listener call 12 s after the cancel); with 1 MB args a few
 * thousand jobs were past the heap limit.
 */
const VIEW_READ_CHARS = 8 * 1024 * 1024;
/** Ids per read: at most a statement's list, and at first (before any view was weighed) a few. */
const MAX_VIEW_IDS = LIST_CHUNK;
const FIRST_VIEW_IDS = 64;

/**
 * The lifecycle reports of this process: the code that commits a change (enqueue, claim,
 * finalize, sweeps, cancel) reports it here after the commit, and the sinks (the `@OnJobEvent`
 * listeners, the metrics) get it on a later turn of the event loop, in report order, so no
 * listener ever runs inside a claim or a finalize. Every report site checks `active` first:
 * without a sink nothing is built, read or queued.
 *
 * Job views are read in one batch per flush, and only for the events a sink asks them for.
 * Reports are in memory: a crash loses the undelivered ones (at most once, by design).
 */
@Injectable()
export class JobLifecycle {
  private readonly logger = new Logger('JobQueue');
  private readonly sinks: JobSignalSink[] = [];
  private queue: JobSignal[] = [];
  private flushing: Promise<void> | undefined;
  /** Some queued signal needs a view read (see VIEW_BATCH_MS). */
  private viewsQueued = false;
  /** Ids the next view read takes, from what the last ones weighed (see VIEW_READ_CHARS). */
  private viewIds = FIRST_VIEW_IDS;
  private readonly appTransactions = new AppTransactionSignals((signals) => this.report(signals));
  /** A sink is registered: report sites build signals only then. */
  active = false;
  /**
   * A sink wants the view of each `completed` job: the finalize then returns the views of the
   * jobs it completes (FinalizeService.completeWithView), so none is read after the commit.
   */
  viewsCompleted = false;

  constructor(
    private readonly db: JobQueueDatabase,
    private readonly events: JobQueueEvents,
  ) {}

  addSink(sink: JobSignalSink): void {
    this.sinks.push(sink);
    this.viewsCompleted ||= sink.needsView('completed');
    if (!this.active) {
      this.active = true;
      this.events.on('settled', this.onSettled);
    }
  }

  /** Resolves when everything reported so far has been delivered. */
  async drain(): Promise<void> {
    while (this.flushing || this.queue.length) {
      this.flushing ??= this.flush();
      await this.flushing;
    }
  }

  /** At shutdown, after the last drain: nothing of this module stays on the application's DataSource. */
  close(): void {
    this.appTransactions.detach();
  }

  /** Jobs written by an enqueue; with the app's `manager`, delivered when its transaction commits. */
  enqueued(jobs: ReadonlyArray<{ id: number; type: string; group: string }>, manager?: EntityManager, view?: JobSignal['view']): void {
    const at = Date.now();
    const signals = jobs.map((j) => {
      const s = signal('enqueued', j.id, at, j.type, j.group);
      s.view = view;
      return s;
    });
    if (manager) this.appTransactions.hold(manager, signals);
    else this.report(signals);
  }

  /** A claimed attempt starts; `readyAt` is when the job became claimable (run_after), if known. */
  started(job: ClaimedJob, startedAt: number, readyAt?: number): void {
    const s = this.of(job, 'started', startedAt);
    if (readyAt !== undefined) s.waitMs = Math.max(0, startedAt - readyAt);
    this.reportOne(s);
  }

  progress(job: ClaimedJob, percent: number, stage: string | null): void {
    const s = this.of(job, 'progress', Date.now());
    s.percent = percent;
    s.stage = stage;
    this.reportOne(s);
  }

  /** The finalize of an attempt this process ran was committed with this outcome (`view`: the job's, if the finalize returned it). */
  attemptEnded(
    job: ClaimedJob,
    outcome: 'done' | 'retried' | 'failed' | 'snoozed',
    durationMs: number,
    error?: string,
    view?: JobSignal['view'],
    delayMs?: number,
  ): void {
    const s = this.of(job, ATTEMPT_EVENT[outcome], Date.now());
    s.durationMs = durationMs;
    if (delayMs !== undefined) s.delayMs = delayMs;
    s.error = error;
    s.view = view;
    this.reportOne(s);
  }

  /** Jobs a sweep put back to `ready` (an expired lease, an overdue attempt); the error is the view's lastError. */
  retrying(ids: readonly number[]): void {
    const at = Date.now();
    this.report(ids.map((id) => signal('retrying', id, at)));
  }

  /** Terminal changes other than this process's own attempts (cascades, roll-ups, cancel, sweeps). */
  private readonly onSettled = (jobs: SettledJob[]): void => {
    const at = Date.now();
    const signals: JobSignal[] = [];
    for (const s of jobs) {
      if (s.ownAttempt) continue; // reported by the scheduler, with type and duration
      const error = s.outcome === 'cancelled' && s.cause !== undefined && s.cause !== s.id ? `upstream job ${s.cause} failed` : undefined;
      const settled = signal(SETTLED_EVENT[s.outcome], s.id, at);
      settled.error = error;
      signals.push(settled);
    }
    if (signals.length) this.report(signals);
  };

  private of(job: ClaimedJob, event: JobSignal['event'], at: number): JobSignal {
    const s = signal(event, job.id, at, job.type, job.group);
    s.attempt = job.attempts;
    return s;
  }

  private report(signals: JobSignal[]): void {
    for (const s of signals) this.reportOne(s);
  }

  private reportOne(s: JobSignal): void {
    if (!this.active) return;
    this.queue.push(s);
    if (!this.viewsQueued && this.needsView(s)) this.viewsQueued = true;
    // Never in the reporting code's turn, so a listener never runs inside a claim or finalize.
    this.flushing ??= new Promise((r) => setImmediate(r)).then(() => this.flush());
  }

  private needsView(s: JobSignal): boolean {
    return this.need(s) !== undefined;
  }

  /** What must be read for a signal: its view (a sink wants it), only its type (a sink counts by type), or nothing. */
  private need(s: JobSignal): 'view' | 'type' | undefined {
    if (s.view) return undefined;
    let type = false;
    for (const k of this.sinks) {
      if (k.needsView(s.event)) return 'view';
      if (s.type === undefined && k.needsType(s.event)) type = true;
    }
    return type ? 'type' : undefined;
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length) {
        // A batch that reads views waits for more reports first, every time: reading as soon as
        // the previous read returned made one query per few jobs, back to back.
        if (this.viewsQueued) await new Promise((r) => setTimeout(r, VIEW_BATCH_MS));
        this.viewsQueued = false;
        const batch = this.queue.splice(0);
        // In slices of report order: each slice's views are read, delivered and let go before the next.
        for (let from = 0; from < batch.length; ) {
          const { to, ids } = this.sliceEnd(batch, from);
          const slice = from === 0 && to === batch.length ? batch : batch.slice(from, to);
          await this.attachViews(slice, ids);
          for (const sink of this.sinks) {
            try {
              sink.deliver(slice);
            } catch (err) {
              this.logger.error(`a job event sink failed: ${(err as Error).message}`, (err as Error).stack);
            }
          }
          for (let i = from; i < to; i++) batch[i] = undefined as never; // delivered: its view may go
          from = to;
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /**
   * The end of the slice from `from`: as many signals as need at most `viewIds` distinct views
   * (and at most a statement's list of ids in all), and the ids to read for them.
   */
  private sliceEnd(batch: JobSignal[], from: number): { to: number; ids: Set<number> } {
    const ids = new Set<number>();
    let views = 0;
    let i = from;
    for (; i < batch.length; i++) {
      const s = batch[i];
      if (ids.has(s.id)) continue;
      const need = this.need(s);
      if (!need) continue;
      if (ids.size === MAX_VIEW_IDS || (need === 'view' && views === this.viewIds)) break;
      ids.add(s.id);
      if (need === 'view') views++;
    }
    return { to: i, ids };
  }

  /** Reads views, and from what they weigh how many the next read takes (see VIEW_READ_CHARS). */
  private async readViews(ids: number[]): Promise<Map<number, NonNullable<JobSignal['view']>>> {
    const { views, jsonChars } = await readJobViews(this.db, ids);
    const perView = jsonChars / Math.max(1, views.size);
    this.viewIds = Math.max(1, Math.min(MAX_VIEW_IDS, Math.floor(VIEW_READ_CHARS / Math.max(1, perView))));
    return views;
  }

  /**
   * Views for the signals a sink wants one for; for those that only lack a type (the metrics of
   * jobs a sweep reclaimed), the type and group alone. Full views read for a type: 1,000 reclaimed
   * jobs with 1 MB args took 19 s and 426 MB of heap to count as retried on PostgreSQL.
   */
  private async attachViews(batch: JobSignal[], ids: Set<number>): Promise<void> {
    if (!ids.size) return;
    const viewIds = new Set<number>();
    for (const s of batch) if (ids.has(s.id) && this.need(s) === 'view') viewIds.add(s.id);
    const typeIds = viewIds.size === ids.size ? [] : [...ids].filter((id) => !viewIds.has(id));
    try {
      const views = viewIds.size ? await this.readViews([...viewIds]) : undefined;
      const types = typeIds.length ? await readJobTypes(this.db, typeIds) : undefined;
      for (const s of batch) {
        const view = s.view ?? views?.get(s.id);
        const known = view ?? types?.get(s.id);
        if (!known) continue;
        if (view) s.view = view;
        s.type ??= known.type;
        s.group ??= known.group;
      }
    } catch (err) {
      // At most once: the events of this batch go out without their views (sinks that need one skip them).
      this.logger.warn(`job events: could not read ${ids.size} job view(s) (${(err as Error).message}); those events are dropped`);
    }
  }
}

/**
 * Every signal has every field, in one order: one hidden class for all of them. Node 20's V8
 * took 0.5–2.5 µs to add fields after an object spread (`{ ...of(job), durationMs }`), several
 * µs per job with a sink registered, and the mixed shapes made every reader megamorphic.
 */
function signal(event: JobSignal['event'], id: number, at: number, type?: string, group?: string): JobSignal {
  return {
    event,
    id,
    type,
    group,
    at,
    attempt: undefined,
    error: undefined,
    durationMs: undefined,
    waitMs: undefined,
    percent: undefined,
    stage: undefined,
    view: undefined,
  };
}

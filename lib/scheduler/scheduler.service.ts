import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ClaimService } from '../claim/claim.service';
import type { ClaimedJob } from '../claim/claimed-job';
import { isConnectionError, isTransientConflict } from '../database/db-errors';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JobQueueEvents } from '../events/job-queue.events';
import { JobLifecycle } from '../events/job-lifecycle';
import { FinalizeService } from '../finalize/finalize.service';
import { AttemptController } from '../handlers/attempt-controller';
import { JobCancelledError, LeaseLostError, ShutdownAbortError } from '../handlers/job-abort.errors';
import type { JobContextIO } from '../handlers/job-context';
import { JobHandlerRegistry, type RegisteredJobHandler } from '../handlers/job-handler.registry';
import { runJob, type RunOutcome } from '../handlers/run-job';
import { waitForStart } from '../handlers/start-delay';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { handBackLeases, readUpstreamResults, renewLeases, writeProgress } from '../lease/lease.sql';
import { PausedWork } from '../pause/paused-work';
import { MAX_PREFETCH_WAIT_MS, PrefetchBuffer } from './prefetch-buffer';
import { retryDelayMs } from './retry-backoff';
import { SlotPlanner } from './slot-planner';
import { JOB_QUEUE_INSTRUMENTATION, type AttemptOutcome, type JobQueueInstrumentation } from '../instrumentation/job-queue.instrumentation';
import { readAttemptTraces } from '../instrumentation/trace-context.sql';
import { WorkerVitals } from './worker-vitals';

interface InFlight {
  job: ClaimedJob;
  handler: RegisteredJobHandler;
  controller: AttemptController;
  /** Settles when the attempt's outcome has been handed to the finalizer. */
  finished: Promise<void>;
}

/**
 * The tick: scan → rank → lease → dispatch → persist. Ticks never overlap; a request during a
 * tick runs another right after it. Ticks are requested when a job finishes (its slot is free
 * at once, before its result is even written), on a wake (a local enqueue or promotion, or a
 * PostgreSQL notification), and by the idle poll.
 */
@Injectable()
export class SchedulerService {
  private readonly logger = new Logger('JobQueue');
  private readonly inFlight = new Map<number, InFlight>();
  private readonly inFlightByGroup = new Map<string, number>();
  private readonly inFlightByType = new Map<string, number>();
  private readonly planner: SlotPlanner;
  private accepting = false;
  private ticking: Promise<void> | undefined;
  private again = false;
  private errorStreak = 0;
  private pausedUntil = 0;
  private readonly io: JobContextIO;
  private readonly buffer: PrefetchBuffer;
  /** A wake-up when an exhausted rate window reopens, sooner than the idle poll. */
  private rateWake: { timer: NodeJS.Timeout; at: number } | undefined;

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly claims: ClaimService,
    private readonly finalizer: FinalizeService,
    private readonly registry: JobHandlerRegistry,
    private readonly db: JobQueueDatabase,
    private readonly events: JobQueueEvents,
    private readonly paused: PausedWork,
    private readonly lifecycle: JobLifecycle,
    private readonly vitals: WorkerVitals,
    @Optional() @Inject(JOB_QUEUE_INSTRUMENTATION) private readonly instrumentation?: JobQueueInstrumentation,
  ) {
    const owner = options.workerId;
    this.buffer = new PrefetchBuffer(options.prefetch);
    this.planner = new SlotPlanner(db, options.concurrency, options.groupWeights, () => this.trigger());
    this.io = {
      progress: async (id, percent, stage) => {
        if (!(await writeProgress(this.db, owner, id, percent, stage))) this.inFlight.get(id)?.controller.abort(new LeaseLostError(id));
        else if (this.lifecycle.active) this.reportProgress(id, percent, stage);
      },
      upstream: (id) => readUpstreamResults(this.db, id),
    };
  }

  get running(): number {
    return this.inFlight.size;
  }

  start(): void {
    this.accepting = true;
    this.vitals.working = true;
    this.events.on('wake', this.trigger);
    this.events.on('cancelled', this.abortCancelled);
    this.paused.on('changed', this.onPauseChanged);
    this.trigger();
  }

  /** Requests a tick; cheap to call often. Prefetched jobs fill free slots at once. */
  readonly trigger = (): void => {
    if (!this.accepting) return;
    for (const job of this.buffer.take(this.freeSlots())) this.dispatch(job);
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.loop();
  };

  /**
   * Claims again when a rate window reopens, if that is sooner than the poll would; one timer,
   * moved earlier when a sooner reopening is reported.
   */
  private readonly wakeIn = (ms: number): void => {
    if (ms >= this.options.pollIntervalMs) return;
    const at = Date.now() + ms;
    if (this.rateWake && this.rateWake.at <= at) return;
    if (this.rateWake) clearTimeout(this.rateWake.timer);
    const timer = setTimeout(() => {
      this.rateWake = undefined;
      this.trigger();
    }, ms);
    timer.unref();
    this.rateWake = { timer, at };
  };

  /** Stops claiming; running jobs continue. */
  stop(): void {
    this.accepting = false;
    this.vitals.working = false;
    if (this.rateWake) clearTimeout(this.rateWake.timer);
    this.rateWake = undefined;
    this.events.off('wake', this.trigger);
    this.paused.off('changed', this.onPauseChanged);
  }

  /** Paused work claimed ahead (prefetched) goes back to the queue; resumed work is claimed at once. */
  private readonly onPauseChanged = (): void => {
    const held = this.buffer.ids().length ? this.buffer.takeStale(0) : [];
    const keep = held.filter((job) => !this.paused.isPaused(job));
    this.buffer.add(keep);
    void this.handBack(held.filter((job) => this.paused.isPaused(job)));
    this.trigger();
  };

  /**
   * Waits up to `graceMs` for running jobs, then aborts the rest and hands their leases back
   * (`ready`, attempt not counted) so another worker takes them at once.
   */
  async drain(graceMs: number): Promise<{ finished: number; handedBack: number }> {
    this.stop();
    await this.ticking; // a claim in flight hands its jobs back itself (see tick)
    const unstarted = await this.handBack(this.buffer.takeStale(0));
    const before = this.inFlight.size;
    const all = Promise.all([...this.inFlight.values()].map((f) => f.finished));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    const remaining = [...this.inFlight.values()];
    for (const f of remaining) f.controller.abort(new ShutdownAbortError());
    const handedBack = unstarted + (await this.handBack(remaining.map((f) => f.job)));
    await Promise.all(remaining.map((f) => f.finished));
    this.events.off('cancelled', this.abortCancelled);
    return { finished: before - remaining.length, handedBack };
  }

  private async handBack(jobs: ClaimedJob[]): Promise<number> {
    if (!jobs.length) return 0;
    return handBackLeases(this.db, this.options.workerId, jobs.map((j) => j.id)).catch((err) => {
      this.logger.warn(`could not hand back ${jobs.length} lease(s) (${(err as Error).message}); they will expire and be reclaimed`);
      return 0;
    });
  }

  /** Renews the leases of everything this process holds; aborts jobs whose lease is gone. */
  async heartbeat(): Promise<void> {
    // Prefetched jobs nobody started in time (handlers got slower) go back to the queue.
    await this.handBack(this.buffer.takeStale(MAX_PREFETCH_WAIT_MS));
    if (!this.inFlight.size && !this.finalizer.pending && !this.buffer.size) {
      this.vitals.heartbeatSucceeded(); // nothing to renew: the renewal path is not failing
      return;
    }
    const snapshot = [...this.inFlight.keys(), ...this.buffer.ids()];
    let held: Set<number> | undefined;
    for (let attempt = 0; !held; attempt++) {
      try {
        held = await renewLeases(this.db, this.options.workerId, this.options.leaseTtlMs);
      } catch (err) {
        if (isTransientConflict(err) && attempt < 3) continue;
        this.vitals.heartbeatFailed();
        this.logger.warn(`lease renewal failed (${(err as Error).message}); retrying at the next heartbeat`);
        return;
      }
    }
    this.vitals.heartbeatSucceeded();
    const lost = snapshot.filter((id) => !held.has(id));
    this.buffer.remove(lost);
    for (const id of lost) this.inFlight.get(id)?.controller.abort(new LeaseLostError(id));
  }

  private readonly abortCancelled = (ids: number[]): void => {
    this.buffer.remove(ids);
    for (const id of ids) this.inFlight.get(id)?.controller.abort(new JobCancelledError(id));
  };

  /**
   * Slots free now. Results waiting to be written count against the slots beyond one batch's
   * worth, `max(concurrency, prefetch)`: if the database slows down, claiming slows too. That
   * bounds memory and what a crash can lose: the attempts running plus those finished but not
   * yet committed, at most `concurrency + max(concurrency, prefetch)` per worker. Larger
   * prefetch buys bigger write batches (far fewer commits for short jobs) for that bound.
   */
  private freeSlots(): number {
    const unwritten = Math.max(0, this.finalizer.pending - Math.max(this.options.concurrency, this.options.prefetch));
    return Math.max(0, this.options.concurrency - this.inFlight.size - unwritten);
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.tick();
      } while (this.again && this.accepting);
    } finally {
      this.ticking = undefined;
    }
  }

  private async tick(): Promise<void> {
    for (const job of this.buffer.take(this.freeSlots())) this.dispatch(job);
    const free = this.freeSlots();
    if ((free <= 0 && !this.buffer.low) || Date.now() < this.pausedUntil) return;
    const room: Record<string, number> = {};
    const types = this.registry.types().filter((type) => {
      if (this.paused.types.has(type)) return false;
      const cap = this.registry.get(type)!.options.concurrency;
      if (cap === undefined) return true;
      room[type] = cap - (this.inFlightByType.get(type) ?? 0);
      return room[type] > 0;
    });
    if (!types.length) return;
    const rateLimited = hasRateLimits(this.options);
    const capped = Object.keys(room).length > 0 || hasLimits(this.options) || rateLimited;
    try {
      const { quotas, rotation } = this.planner.plan({
        free,
        // Never prefetch under caps: a buffered job would hold capacity that is scarce by definition.
        prefetch: capped ? 0 : this.buffer.room(),
        types,
        inFlightByGroup: this.inFlightByGroup,
        pausedGroups: this.paused.groups,
      });
      if (!quotas.length && !rotation) return;
      let jobs = await this.claims.claim({
        owner: this.options.workerId,
        types,
        quotas,
        rotation,
        groupWeights: this.options.groupWeights,
        leaseTtlMs: this.options.leaseTtlMs,
        start: true,
        limits: capped && hasLimits(this.options) ? this.options.limits : undefined,
        room: Object.keys(room).length ? { types: room } : undefined,
        excludeGroups: this.paused.groups.size ? [...this.paused.groups] : undefined,
        rateLimits: rateLimited ? this.options.rateLimits : undefined,
        onRateLimited: rateLimited ? this.wakeIn : undefined,
        withTrace: this.instrumentation !== undefined,
      });
      this.recovered();
      if (!this.accepting) {
        await this.handBack(jobs); // shutdown began while the claim was in flight
        return;
      }
      if (this.paused.any && jobs.some((job) => this.paused.isPaused(job))) {
        // A pause arrived while the claim was in flight: those jobs go back unstarted.
        await this.handBack(jobs.filter((job) => this.paused.isPaused(job)));
        jobs = jobs.filter((job) => !this.paused.isPaused(job));
      }
      if (this.instrumentation && jobs.length) {
        const reading = this.attachTraces(jobs);
        if (reading) await reading;
      }
      if (capped) {
        // Under caps and rate limits a claimed job starts now or goes back: waiting in the buffer
        // it would hold scarce capacity, and start later than its rate window counted it. It was
        // planned to fit a free slot; only the soft bound on unwritten results can have moved.
        const fits = Math.max(0, this.options.concurrency - this.inFlight.size);
        jobs.slice(0, fits).forEach((job) => this.dispatch(job));
        await this.handBack(jobs.slice(fits));
        jobs = jobs.slice(0, fits);
      } else {
        // Slots may have freed while the claim was in flight: start what fits, keep the rest.
        const fits = this.freeSlots();
        jobs.slice(0, fits).forEach((job) => this.dispatch(job));
        this.buffer.add(jobs.slice(fits));
      }
      const asked = quotas.reduce((n, q) => n + q.limit, rotation ?? 0);
      if (jobs.length >= asked) this.again = true; // there may be more
      else if (rotation || quotas.some((q) => q.group !== undefined)) this.planner.invalidate(); // a group ran dry
    } catch (err) {
      this.failed(err);
    }
  }

  private dispatch(job: ClaimedJob): void {
    const handler = this.registry.get(job.type)!;
    const controller = new AttemptController();
    const entry = { job, handler, controller } as InFlight;
    this.inFlight.set(job.id, entry);
    bump(this.inFlightByGroup, job.group, 1);
    bump(this.inFlightByType, job.type, 1);
    this.vitals.inFlight = this.inFlight.size;
    if (job.startAt !== undefined && job.startAt > Date.now()) {
      // Admitted by its rate window ahead of the reopening: it holds its slot and starts then.
      entry.finished = waitForStart(job.startAt, controller).then((start) =>
        start ? this.begin(job, handler, controller) : this.afterRun(job, { kind: 'aborted', reason: controller.reason }, Date.now()),
      );
    } else entry.finished = this.begin(job, handler, controller);
  }

  private begin(job: ClaimedJob, handler: RegisteredJobHandler, controller: AttemptController): Promise<void> {
    if (job.startBy !== undefined && Date.now() > job.startBy) {
      // Started later than its rate window allows (the process was not scheduled in time): it
      // goes back unstarted, its attempt uncounted; its window slot is spent.
      this.vitals.lateStarts++;
      this.logger.warn(`job ${job.id} reached its start ${Date.now() - job.startBy} ms after its rate window's grace (the process was not scheduled in time); handed back unstarted`);
      return this.afterRun(job, { kind: 'aborted', reason: 'late' }, Date.now()).then(() => this.handBack([job]).then(() => this.trigger()));
    }
    const timeoutMs = job.timeoutMs ?? handler.options.timeoutMs ?? this.options.defaultTimeoutMs;
    const startedAt = Date.now();
    if (this.lifecycle.active) this.lifecycle.started(job, startedAt, readyTime(job, this.db));
    const run = () => runJob(job, handler, controller, timeoutMs, this.io, this.options.maxResultBytes);
    const attempt: Promise<AttemptOutcome> = this.instrumentation ? this.instrumented(job, run) : run();
    return attempt.then(
      (outcome) => {
        this.buffer.observe(Date.now() - startedAt);
        return this.afterRun(job, outcome, startedAt);
      },
      (err) => this.afterRun(job, { kind: 'failed', error: String(err), final: false }, startedAt),
    );
  }

  /** The attempt inside the instrumentation's hooks; a hook that throws costs the trace, never the job. */
  private instrumented(job: ClaimedJob, run: () => Promise<RunOutcome>): Promise<AttemptOutcome> {
    try {
      return this.instrumentation!.runAttempt(job, job.trace ?? NO_TRACE, run);
    } catch (err) {
      this.logger.warn(`instrumentation failed to start job ${job.id}'s attempt (${(err as Error).message}); running it untraced`);
      return run();
    }
  }

  /**
   * Only with an instrumentation registered: the carriers each attempt links to. A job whose
   * claim returned its own carrier and says it has no upstreams needs nothing more; the others
   * (upstreams to link, or a column that does not say) are read in one statement, undefined
   * when there are none. Links are lost, not jobs, if the read fails.
   */
  private attachTraces(jobs: ClaimedJob[]): Promise<void> | undefined {
    let unread: ClaimedJob[] | undefined;
    for (const job of jobs) {
      if (job.creation?.upstreams === false) job.trace = { created: job.creation.created, upstream: [] };
      else (unread ??= []).push(job);
    }
    if (!unread) return undefined;
    const rest = unread;
    return readAttemptTraces(this.db, rest.map((j) => j.id)).then(
      (traces) => {
        for (const job of rest) job.trace = traces.get(job.id);
      },
      (err: Error) => {
        this.logger.warn(`could not read the trace contexts of ${rest.length} claimed job(s) (${err.message}); their spans start unlinked`);
      },
    );
  }

  private async afterRun(job: ClaimedJob, outcome: AttemptOutcome, startedAt: number): Promise<void> {
    this.inFlight.delete(job.id);
    this.vitals.inFlight = this.inFlight.size;
    bump(this.inFlightByGroup, job.group, -1);
    bump(this.inFlightByType, job.type, -1);
    this.trigger(); // the slot is free now; the result is written in the background
    const durationMs = Date.now() - startedAt;
    if (outcome.kind === 'done') {
      const written = await this.finalizer.complete(job.id, outcome.resultJson, job.parentId, job.attempts, outcome.carrier);
      if (this.lifecycle.active && written !== 'lost') this.lifecycle.attemptEnded(job, written, durationMs, written === 'done' ? undefined : 'the database refused the result');
    } else if (outcome.kind === 'failed') {
      const written = await this.finalizer.fail({
        id: job.id,
        error: outcome.error,
        final: outcome.final,
        retryDelayMs: retryDelayMs(job.attempts, this.options.retryBackoff),
      });
      if (this.lifecycle.active && written !== 'lost') this.lifecycle.attemptEnded(job, written, durationMs, outcome.error);
    }
    if (outcome.kind !== 'aborted') this.trigger(); // the written result may have been holding a slot
  }

  private reportProgress(id: number, percent: number, stage: string | undefined | null): void {
    const job = this.inFlight.get(id)?.job;
    if (job) this.lifecycle.progress(job, percent, stage ?? null);
  }

  private recovered(): void {
    this.vitals.claimSucceeded();
    if (this.errorStreak) this.logger.log('claiming again after database errors');
    this.errorStreak = 0;
  }

  private failed(err: unknown): void {
    const delay = Math.min(5_000, 100 * 2 ** Math.min(this.errorStreak, 6));
    this.pausedUntil = Date.now() + delay;
    this.vitals.claimFailed();
    if (this.errorStreak++ === 0 || !isConnectionError(err)) {
      this.logger.warn(`claim failed (${(err as Error).message}); retrying with backoff`);
    }
    setTimeout(this.trigger, delay).unref();
  }
}

const NO_TRACE = { created: null, upstream: [] } as const;

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n) map.set(key, n);
  else map.delete(key);
}

/** When the job became claimable (its `run_after`), if the claim returned it. */
function readyTime(job: ClaimedJob, db: JobQueueDatabase): number | undefined {
  const raw = job.readyAt;
  if (raw == null) return undefined;
  if (typeof raw === 'number') return raw;
  const at = raw instanceof Date ? raw : db.dialect.parseTime(raw);
  const ms = at?.getTime();
  return ms === undefined || Number.isNaN(ms) ? undefined : ms;
}

function hasRateLimits(options: ResolvedJobQueueOptions): boolean {
  return Object.keys(options.rateLimits.types).length > 0 || Object.keys(options.rateLimits.groups).length > 0;
}

function hasLimits(options: ResolvedJobQueueOptions): boolean {
  const l = options.limits;
  return l.global > 0 || Object.keys(l.groups).length > 0 || Object.keys(l.types).length > 0;
}

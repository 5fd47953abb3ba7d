import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { reachesPausedGroup, type ClaimRequest } from '../claim/claim-request';
import { ClaimService } from '../claim/claim.service';
import { rotationCursorName } from '../claim/rotation-cursor';
import type { ClaimedJob } from '../claim/claimed-job';
import { isConnectionError, isTransientConflict } from '../database/db-errors';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JobQueueEvents } from '../events/job-queue.events';
import { JobLifecycle } from '../events/job-lifecycle';
import { FinalizeService, type FinalizeResult } from '../finalize/finalize.service';
import { storableErrorText } from '../finalize/error-text';
import type { FollowUpClaimer } from '../finalize/follow-up-claim';
import { AttemptController } from '../handlers/attempt-controller';
import { JobCancelledError, LeaseLostError, ShutdownAbortError } from '../handlers/job-abort.errors';
import type { JobContextIO } from '../handlers/job-context';
import { JobHandlerRegistry, type RegisteredJobHandler } from '../handlers/job-handler.registry';
import { runJob, type RunOutcome } from '../handlers/run-job';
import { waitForStart } from '../handlers/start-delay';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { handBackLeases } from '../lease/hand-back.sql';
import { readUpstreamFailures, readUpstreamResults, renewLeases, writeProgress } from '../lease/lease.sql';
import { PausedWork } from '../pause/paused-work';
import { MAX_PREFETCH_WAIT_MS, PrefetchBuffer } from './prefetch-buffer';
import { ProgressWrites } from './progress-writes';
import { JobLogSink } from '../logs/job-log.sink';
import { retryDelayMs } from './retry-backoff';
import { SlotPlanner } from './slot-planner';
import type { JobView } from '../job.types';
import { JOB_QUEUE_INSTRUMENTATION, type AttemptOutcome, type JobQueueInstrumentation } from '../instrumentation/job-queue.instrumentation';
import { readAttemptTraces } from '../instrumentation/trace-context.sql';
import { WorkerVitals } from './worker-vitals';
import { hasKeys } from '../options/has-keys';

/** A claim planned by the tick, or by a finalize that ends with the worker's claim. */
interface PlannedClaim {
  request: ClaimRequest;
  /** Caps, rate limits or per-type room apply: what is claimed starts now or goes back. */
  capped: boolean;
}

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
 * PostgreSQL notification), and by the idle poll. A finalize transaction ends with the claim a
 * tick would make (see followUps), and a tick leaves its claim to such a write when one is
 * about to run.
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
  /** The fair-share cursor of every type this worker handles (see ClaimRequest.rotationCursor), named at the first rotation claim. */
  private rotationCursor: string | undefined;
  /** The claim after the backoff (see retryAfterBackoff). */
  private backoffTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly io: JobContextIO;
  private readonly buffer: PrefetchBuffer;
  private readonly progressWrites: ProgressWrites;
  private readonly logs: JobLogSink;
  /** The lease renewal in progress, if any. */
  private renewing: Promise<void> | undefined;
  /** A wake-up when an exhausted rate window reopens, sooner than the idle poll. */
  private rateWake: { timer: NodeJS.Timeout; at: number } | undefined;
  /**
   * A finalize transaction's claim in flight (see followUps): like a tick, no other tick runs
   * meanwhile (`ticking` is its promise), so the two never claim the same free slots.
   */
  private followUp: { planned: PlannedClaim; resolve(): void; ended?: true } | undefined;
  /** A tick left its claim to a finalize write about to claim; if that write does not, a tick must. */
  private leftToFinalizer = false;
  /** Finalize transactions end with this worker's claim (see followUps). */
  private followUpsOn = false;
  /** Jobs a hand-back found locked by another transaction, still this worker's: tried again at the next heartbeat. */
  private readonly handBackLater = new Set<number>();

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
    const progress = (this.progressWrites = new ProgressWrites(async (id, percent, stage) => {
      if (!(await writeProgress(this.db, owner, id, percent, stage))) this.inFlight.get(id)?.controller.abort(new LeaseLostError(id));
      else if (this.lifecycle.active) this.reportProgress(id, percent, stage);
      // SQLite writes synchronously: a handler awaiting progress in a loop never let the event
      // loop turn (40 x 1,000 awaited calls: a 1.3 s stall, heartbeats and timers included).
      if (db.dialect.name === 'sqlite') await new Promise((resolve) => setImmediate(resolve));
    }));
    const logs = (this.logs = new JobLogSink(db, (message) => this.logger.warn(message), instrumentation));
    this.io = {
      progress: (id, percent, stage) => progress.report(id, percent, stage),
      upstream: (id) => readUpstreamResults(this.db, id),
      upstreamFailures: (id) => readUpstreamFailures(this.db, id),
      // Lines of an attempt that has ended (a handler still logging after its abort, or after
      // returning) are not stored: they would come after the job's result.
      log: (id, line) => {
        if (this.inFlight.has(id)) logs.append(id, line);
      },
      maxLogLines: options.maxLogLines,
    };
  }

  get running(): number {
    return this.inFlight.size;
  }

  start(): void {
    this.accepting = true;
    this.vitals.working = true;
    this.followUpsOn = this.followUpsServe() && this.finalizer.claimWith(this.followUps);
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
    this.finalizer.claimWith(undefined);
    this.followUpsOn = false;
    if (this.rateWake) clearTimeout(this.rateWake.timer);
    this.rateWake = undefined;
    this.events.off('wake', this.trigger);
    this.paused.off('changed', this.onPauseChanged);
  }

  /** Paused work claimed ahead (prefetched) goes back to the queue; resumed work is claimed at once. */
  private readonly onPauseChanged = (): void => {
    const held = this.buffer.ids().length ? this.buffer.takeStale(0) : [];
    const [paused, keep] = this.paused.split(held);
    this.buffer.add(keep);
    void this.handBack(paused);
    this.planner.invalidate(this.paused.groups); // a resumed group is claimable at once
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
    let handedBack = unstarted + (await this.handBack(remaining.map((f) => f.job)));
    await Promise.all(remaining.map((f) => f.finished));
    // Rows locked meanwhile (most likely by this worker's own finalize or renewal), once more;
    // what is still locked then expires and is reclaimed after the lease.
    handedBack += await this.handBackIds(this.takeHandBackLater());
    this.handBackLater.clear();
    this.events.off('cancelled', this.abortCancelled);
    this.logs.flushWarnings();
    return { finished: before - remaining.length, handedBack };
  }

  private handBack(jobs: ClaimedJob[]): Promise<number> {
    return this.handBackIds(jobs.map((j) => j.id));
  }

  /** Hands leases back; the rows another transaction has locked wait for the next heartbeat. */
  private async handBackIds(ids: number[]): Promise<number> {
    if (!ids.length) return 0;
    try {
      const { handedBack, held } = await handBackLeases(this.db, this.options.workerId, ids);
      for (const id of held) this.handBackLater.add(id);
      return handedBack;
    } catch (err) {
      this.logger.warn(`could not hand back ${ids.length} lease(s) (${(err as Error).message}); they will expire and be reclaimed`);
      return 0;
    }
  }

  private takeHandBackLater(): number[] {
    const ids = [...this.handBackLater];
    this.handBackLater.clear();
    return ids;
  }

  /**
   * Renews the leases of everything this process holds; aborts jobs whose lease is gone. One
   * renewal at a time: a heartbeat slower than its interval (a loaded database) is not joined by
   * more, each queueing behind the last for the same rows.
   */
  heartbeat(): Promise<void> {
    // Prefetched jobs nobody started in time (handlers got slower) go back to the queue, after
    // the renewal and outside it: the two would skip each other's rows.
    // Rows an earlier hand-back found locked go with them.
    const stale = [...this.buffer.takeStale(MAX_PREFETCH_WAIT_MS).map((j) => j.id), ...this.takeHandBackLater()];
    this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
    const renewed = this.renewing;
    return stale.length ? renewed.then(async () => void (await this.handBackIds(stale))) : renewed;
  }

  private async renew(): Promise<void> {
    if (!this.inFlight.size && !this.finalizer.pending && !this.buffer.size) {
      this.vitals.heartbeatSucceeded(); // nothing to renew: the renewal path is not failing
      return;
    }
    const snapshot = [...this.inFlight.keys(), ...this.buffer.ids()];
    this.vitals.heartbeatStarted();
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
    // A finalize write about to run ends with this worker's claim, after the promotions it is
    // making: that claim takes what this one would, and more. If it ends up not claiming, it
    // calls `missed` and a tick claims after all.
    if (this.finalizer.claimsNext && !this.paused.groups.size) {
      this.leftToFinalizer = true;
      return;
    }
    try {
      const planned = this.planClaim();
      if (!planned) return;
      this.vitals.claimStarted();
      const jobs = await this.claims.claim(planned.request);
      this.recovered();
      await this.deliver(jobs, planned);
    } catch (err) {
      this.failed(err);
    }
  }

  /**
   * The claim a tick makes now: free slots (plus prefetch) by the slot planner, under the caps.
   * `afterFinalize`: the claim that ends a finalize (see followUps).
   */
  private planClaim(afterFinalize = false): PlannedClaim | undefined {
    const free = this.freeSlots();
    if (free <= 0 && !this.buffer.low) return undefined;
    if (Date.now() < this.pausedUntil) {
      this.retryAfterBackoff();
      return undefined;
    }
    const room: Record<string, number> = {};
    const types = this.registry.types().filter((type) => {
      if (this.paused.types.has(type)) return false;
      const cap = this.registry.get(type)!.options.concurrency;
      if (cap === undefined) return true;
      room[type] = cap - (this.inFlightByType.get(type) ?? 0);
      return room[type] > 0;
    });
    if (!types.length) return undefined;
    const rateLimited = hasRateLimits(this.options);
    const capped = Object.keys(room).length > 0 || hasLimits(this.options) || rateLimited;
    const { quotas, rotation } = this.planner.plan({
      free,
      // Never prefetch under caps: a buffered job would hold capacity that is scarce by definition.
      prefetch: capped ? 0 : this.buffer.room(),
      types,
      inFlightByGroup: this.inFlightByGroup,
      pausedGroups: this.paused.groups,
      afterFinalize,
    });
    if (!quotas.length && !rotation) return undefined;
    const request: ClaimRequest = {
      owner: this.options.workerId,
      types,
      quotas,
      rotation,
      rotationCursor: rotation ? (this.rotationCursor ??= rotationCursorName(this.registry.types())) : undefined,
      groupWeights: this.options.groupWeights,
      leaseTtlMs: this.options.leaseTtlMs,
      start: true,
      limits: capped && hasLimits(this.options) ? this.options.limits : undefined,
      room: Object.keys(room).length ? { types: room } : undefined,
      excludeGroups: this.paused.groups.size ? this.paused.groupList : undefined,
      rateLimits: rateLimited ? this.options.rateLimits : undefined,
      onRateLimited: rateLimited ? this.wakeIn : undefined,
      withTrace: this.instrumentation !== undefined,
    };
    return { request, capped };
  }

  /** Starts or buffers what a claim took, as its plan says; asks for another tick if there may be more. */
  private async deliver(claimed: ClaimedJob[], { request, capped }: PlannedClaim): Promise<void> {
    let jobs = claimed;
    if (!this.accepting) {
      await this.handBack(jobs); // shutdown began while the claim was in flight
      return;
    }
    if (this.paused.any && jobs.some((job) => this.paused.isPaused(job))) {
      // A pause arrived while the claim was in flight: those jobs go back unstarted. Split once,
      // before the hand-back's await: a resume heard during it made the second look keep a job
      // just handed back, which then ran here and again under the next claim.
      const [paused, unpaused] = this.paused.split(jobs);
      jobs = unpaused;
      await this.handBack(paused);
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
    const { quotas, rotation } = request;
    const asked = quotas.reduce((n, q) => n + q.limit, rotation ?? 0);
    if (jobs.length >= asked) this.again = true; // there may be more
    else if (rotation || quotas.some((q) => q.group !== undefined)) this.planner.invalidate(); // a group ran dry
  }

  /**
   * Whether a finalize may end with this worker's claim: only where that claim needs nothing
   * beyond the plain one (no cluster caps, rate limits or per-handler concurrency, whose locks
   * and counts belong to a claim of their own). Paused groups are checked per claim.
   */
  private followUpsServe(): boolean {
    return !hasLimits(this.options) && !hasRateLimits(this.options) && this.registry.types().every((t) => this.registry.get(t)!.options.concurrency === undefined);
  }

  /** The port through which a finalize transaction ends with this worker's claim (lib/finalize/follow-up-claim.ts). */
  private readonly followUps: FollowUpClaimer = {
    nothingReady: () => this.planner.nothingReady,
    request: () => {
      if (!this.accepting) return undefined;
      if (this.ticking && (!this.followUp || this.followUp.ended)) {
        // A tick's claim is in flight and may have run before this promotion, or the last write's
        // claim is being delivered (this is the next write, not that one retried): claim once
        // more after it. Taken for a retry, the next write's jobs were leased and never started.
        this.again = true;
        return undefined;
      }
      let planned: PlannedClaim | undefined;
      try {
        planned = this.planClaim(true);
      } catch (err) {
        // Never the finalize's failure: it commits without a claim, and `missed` starts a tick.
        this.logger.warn(`could not plan the claim after a finalize (${(err as Error).message})`);
      }
      if (!planned || planned.capped || reachesPausedGroup(planned.request)) return undefined;
      this.leftToFinalizer = false;
      if (this.followUp) this.followUp.planned = planned; // the transaction is being retried
      else {
        let resolve!: () => void;
        this.ticking = new Promise<void>((r) => (resolve = r));
        this.followUp = { planned, resolve };
      }
      return planned.request;
    },
    ended: (jobs) => void this.endFollowUp(jobs),
    missed: () => {
      if (!this.leftToFinalizer) return;
      this.leftToFinalizer = false;
      this.trigger();
    },
  };

  private async endFollowUp(jobs: ClaimedJob[] | undefined): Promise<void> {
    const followUp = this.followUp;
    if (!followUp) {
      // No write claims without a follow-up (see request); should one, its jobs go back at once
      // rather than wait out their leases.
      if (jobs?.length) await this.handBack(jobs);
      return;
    }
    followUp.ended = true;
    try {
      if (jobs) {
        this.recovered();
        await this.deliver(jobs, followUp.planned);
      } else this.again = true; // it did not commit: claim as the tick would have
    } catch (err) {
      this.failed(err);
    } finally {
      this.followUp = undefined;
      this.ticking = undefined;
      followUp.resolve();
      if (this.again && this.accepting) this.ticking = this.loop();
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
    // Nothing records (the tracing module without an SDK): the read would be for nothing, and
    // every job there says nothing about its upstreams, so it followed every claim.
    if (this.instrumentation!.recording?.() === false) return undefined;
    let unread: ClaimedJob[] | undefined;
    for (const job of jobs) {
      if (job.creation?.upstreams === false) job.trace = { created: job.creation.created, upstream: NO_UPSTREAMS };
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
    const durationMs = Date.now() - startedAt;
    // Progress the handler reported without awaiting is written (and its event sent) before the
    // outcome (see ProgressWrites.settled); the job holds its slot meanwhile.
    const progressWritten = outcome.kind === 'aborted' ? undefined : this.progressWrites.settled(job.id);
    if (progressWritten) await progressWritten;
    // Lines logged before the handler returned are stored before its result, so that whoever
    // sees the job finished finds its whole log (a failed write ends the wait too: see LogWrites).
    const logsWritten = outcome.kind === 'aborted' ? undefined : this.logs.settled(job.id);
    if (logsWritten) await logsWritten;
    this.inFlight.delete(job.id);
    this.vitals.inFlight = this.inFlight.size;
    bump(this.inFlightByGroup, job.group, -1);
    bump(this.inFlightByType, job.type, -1);
    // Handed to the finalizer before the tick below, so that the tick sees a write queued that
    // will end with this worker's claim (see tick).
    let writing: Promise<FinalizeResult> | undefined;
    let view: JobView | undefined;
    let failure: string | undefined;
    if (outcome.kind === 'done') {
      writing = this.lifecycle.viewsCompleted
        ? this.finalizer.completeWithView(job.id, outcome.resultJson, job.parentId, job.attempts, outcome.carrier).then((w) => ((view = w.view), w.result))
        : this.finalizer.complete(job.id, outcome.resultJson, job.parentId, job.attempts, outcome.carrier);
    } else if (outcome.kind === 'failed') {
      const retryDelay = retryDelayMs(job.attempts, this.options.retryBackoff);
      // As stored, so that an event's `error` is the view's `lastError` (not a 1 MB message).
      failure = storableErrorText(outcome.error);
      writing = this.finalizer.fail({ id: job.id, error: failure, final: outcome.final, retryDelayMs: retryDelay });
    } else if (outcome.kind === 'snoozed') {
      writing = this.finalizer.snooze({ id: job.id, delayMs: outcome.delayMs }, job.attempts);
    }
    // Results past one batch's worth hold slots until written (see freeSlots).
    const holdsSlot = this.finalizer.pending > Math.max(this.options.concurrency, this.options.prefetch);
    this.trigger(); // the slot is free now; the result is written in the background
    if (!writing) return;
    const written = await writing;
    if (this.lifecycle.active && written !== 'lost') {
      const error = failure ?? (written === 'done' || written === 'snoozed' ? undefined : 'the database refused the result');
      this.lifecycle.attemptEnded(job, written, durationMs, error, view, outcome.kind === 'snoozed' ? outcome.delayMs : undefined);
    }
    // The written result may have been holding a slot (a cluster cap's, under `limits`), or made
    // its job ready again. A done job's write that ended with this worker's claim needs no
    // other: that claim came after the result, and sees everything it changed.
    if (written !== 'done' || holdsSlot || !this.followUpsOn) this.trigger();
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
    this.retryAfterBackoff();
  }

  /**
   * Claims again once the backoff after a failed claim is over. A timer may fire before
   * Date.now() reaches its time (libuv dates it from the event loop's cached clock, stale by
   * however long the loop was busy), and the claim it started then found itself still inside
   * the backoff and claimed nothing: with no other event the work waited for the next poll (a
   * dependent left ready for over 20 s in 1 run of ~7, follow-up-claim-failure.spec, poll 60 s).
   * A claim inside the backoff now arms the timer for the rest.
   */
  private retryAfterBackoff(): void {
    if (this.backoffTimer) return;
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = undefined;
      this.trigger();
    }, Math.max(1, this.pausedUntil - Date.now()));
    this.backoffTimer.unref();
  }
}

/** Shared by every attempt without upstreams (most of them): one array less per job. */
const NO_UPSTREAMS: readonly [] = Object.freeze([]);
const NO_TRACE = { created: null, upstream: NO_UPSTREAMS } as const;

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
  return hasKeys(options.rateLimits.types) || hasKeys(options.rateLimits.groups);
}

function hasLimits(options: ResolvedJobQueueOptions): boolean {
  const l = options.limits;
  return l.global > 0 || hasKeys(l.groups) || hasKeys(l.types);
}

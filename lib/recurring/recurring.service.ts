import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronTime } from 'cron';
import { databaseNow } from '../database/database-now.sql';
import { isUniqueViolation } from '../database/db-errors';
import { JobQueueConnection } from '../database/job-queue.connection';
import type { SqlExecutor } from '../database/sql-executor';
import { insertGraph, withKeyRaceRetry } from '../enqueue/graph-enqueuer';
import { normalizeJob, type NormalizeContext, type NormalizedJob } from '../enqueue/normalize-job';
import { InvalidScheduleError, ScheduleNotFoundError, UnknownJobTypeError } from '../errors';
import { describeValue } from '../errors/options.errors';
import { JobQueueEvents } from '../events/job-queue.events';
import { JobLifecycle } from '../events/job-lifecycle';
import { validateGraph } from '../graph/validate-graph';
import { JobHandlerRegistry } from '../handlers/job-handler.registry';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import type { EnqueueInput, GraphNode } from '../job.types';
import { notifyInTransaction } from '../notify/notify.sql';
import { tickerContact } from './ticker.sql';
import { RecurringExplorer } from './recurring.explorer';
import { CronClock } from './cron-clock';
import { nextSlot, planSlots } from './recurring-slots';
import { defineSchedule, isScheduleName, type ScheduleDefinition, type ScheduleInput } from './schedule-definition';
import { slotKey } from './slot-key';
import type { ScheduleView } from './schedule-view';
import type { FindSchedulesResult, ScheduleFilter } from './schedule-filter';
import { findWholeSchedulesPage, listWholeSchedules } from './schedule-page';
import type { FindOptions } from '../query/job-filter';
import { ShutdownClock } from '../scheduler/shutdown-clock';
import {
  anyScheduleDue,
  declareSchedule,
  deleteSchedule,
  findSchedule,
  insertSchedule,
  lockDueSchedules,
  pruneLapsedDeclarations,
  recordTicks,
  renewDeclarations,
  type TickRecord,
  updateScheduleDefinition,
  type StoredSchedule,
} from './schedules.sql';

/** How often each worker process looks for due slots. */
export const RECURRING_TICK_MS = 1_000;
/**
 * Schedules locked per tick transaction. Tenants' schedules tend to fall due together (10,000 at
 * the top of the hour): at 50 per transaction, and one UPDATE per schedule, a tick enqueued 700 to
 * 1,000 of them per second, and everything past the misfire grace was skipped as missed.
 */
const SCHEDULES_PER_TICK = 500;
/** A transaction stops taking schedules past this many jobs (backfill may add up to 1,000 per schedule); the rest go to the next. */
const JOBS_PER_TICK = 5_000;
/**
 * A transaction reads schedules, and enqueues slots, up to this many characters of args (one at
 * least); the rest go to the next, a schedule's remaining slots too. By count alone, 600
 * schedules with 1 MB args due at once made a 2.7 GB tick that failed on PostgreSQL (its insert
 * was longer than a string can be) and crashed the process out of heap on SQLite, every tick.
 */
const CHARS_PER_TICK = 16 * 1024 * 1024;
/** Ticks that reached the database at most this far apart, from any process, belong to one run (see `tickerContact`). */
const STREAK_GAP_MS = 5 * RECURRING_TICK_MS;
/** A cluster's contact this recent is only read (see `tickerContact`). */
const CONTACT_FRESH_MS = RECURRING_TICK_MS / 2;
/**
 * A schedule row that no longer checks out is tried again this much later. Left due, it kept its
 * place at the head of the due rows: 500 of them filled every tick's batch, which then never
 * reached the schedules behind them and, being full, started over at once (a busy loop).
 */
const BROKEN_RETRY_MS = 60_000;
/**
 * An `@Recurring` declaration is a lease of this many `leaseTtlMs`, renewed every `leaseTtlMs` by
 * each process that declares it: a schedule whose decorator no running process has any more
 * stops firing within that time, and a process that misses a few renewals does not stop it.
 */
const DECLARATION_LEASES = 5;
/**
 * Rows of schedules nothing has declared for this long are deleted. Not at once: a service that
 * shares the database and is down for a while keeps its schedules' history and backfill.
 */
const PRUNE_LAPSED_AFTER_MS = 7 * 24 * 3_600_000;
/** How often each worker process looks for declarations to prune. */
const PRUNE_EVERY_MS = 60_000;

/**
 * Recurring schedules: stores them (`@Recurring` ones at start-up, others through
 * `queue.schedule()`), and on every worker process enqueues due slots once a second.
 *
 * Exactly once per slot, whatever the number of replicas and their clocks: slots are computed
 * from the database's clock, a tick locks the due schedule rows (FOR UPDATE SKIP LOCKED; SQLite's
 * BEGIN IMMEDIATE holds the write lock) and moves `next_run_at` past what it enqueued in the
 * same transaction, and each job's key `recurring:<name>:<slot ISO>` is unique in `jobs`.
 */
@Injectable()
export class RecurringService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('JobQueue');
  private ticking: Promise<void> | null = null;
  /** performance.now() of this process's last tick statement that reached the database. */
  private lastContact = -Infinity;
  /** The run's start this process ticked by last (see runTick). */
  private tickingSince: Date | undefined;
  /** Memoized cron arithmetic: tenants share expressions and slots (see CronClock). */
  private readonly clock = new CronClock();
  private timerName: string;
  private renewTimerName: string;
  private renewing: Promise<void> | null = null;
  private lastPrune = -Infinity;

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly connection: JobQueueConnection,
    private readonly registry: JobHandlerRegistry,
    private readonly explorer: RecurringExplorer,
    private readonly events: JobQueueEvents,
    private readonly timers: SchedulerRegistry,
    private readonly lifecycle: JobLifecycle,
    private readonly shutdown: ShutdownClock,
  ) {
    this.timerName = `job-queue:${options.workerId}:recurring`;
    this.renewTimerName = `job-queue:${options.workerId}:recurring-declarations`;
  }

  /** How long an `@Recurring` declaration lasts without a renewal. */
  private get declarationTtlMs(): number {
    return DECLARATION_LEASES * this.options.leaseTtlMs;
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const def of this.explorer.definitions) await this.store(def, this.declarationTtlMs);
    // Every process that declares schedules keeps them alive, workers or not.
    if (this.explorer.definitions.length) {
      this.timers.addInterval(this.renewTimerName, setInterval(() => void this.renew(), this.options.leaseTtlMs));
    }
    if (!this.options.worker || !this.registry.types().length) return;
    this.timers.addInterval(this.timerName, setInterval(() => void this.tick(), RECURRING_TICK_MS));
    void this.tick();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timers.doesExist('interval', this.timerName)) this.timers.deleteInterval(this.timerName);
    if (this.timers.doesExist('interval', this.renewTimerName)) this.timers.deleteInterval(this.renewTimerName);
    // A tick or renewal waiting for a server that stopped answering would hold app.close()
    // forever: waited for within the shutdown's bound only (the connections close after it).
    await this.shutdown.deadline().wait(Promise.all([this.ticking, this.renewing]), 'the recurring tick');
  }

  /** Renews this process's `@Recurring` declarations; one renewal at a time, failures logged. */
  renew(): Promise<void> {
    if (this.renewing) return this.renewing;
    const names = this.explorer.definitions.map((d) => d.name);
    this.renewing = renewDeclarations(this.connection.db, names, this.declarationTtlMs)
      .catch((err) => this.logger.warn(`recurring declarations not renewed: ${(err as Error)?.message ?? String(err)}`))
      .finally(() => (this.renewing = null));
    return this.renewing;
  }

  /** Creates or replaces a schedule. Bad input throws InvalidScheduleError and writes nothing. */
  async schedule(input: ScheduleInput): Promise<ScheduleView> {
    const def = defineSchedule(input);
    if (this.options.strictTypes && !this.registry.get(def.type) && !this.options.externalTypes.includes(def.type)) {
      throw new UnknownJobTypeError(def.type, this.registry.types());
    }
    await this.store(def, null);
    const stored = await findSchedule(this.connection.db, def.name);
    return toView(stored!);
  }

  /** Removes a schedule; true if it existed. Jobs it already enqueued stay. */
  async unschedule(name: string): Promise<boolean> {
    return isScheduleName(String(name)) && deleteSchedule(this.connection.db, String(name));
  }

  /**
   * The job a run of schedule `name` outside its slots would be: its type, job options and args,
   * with `slot` at the database's now and `manual: true`. No key: each trigger is its own run, and
   * the schedule's next slot stays where it is. Unknown name: ScheduleNotFoundError.
   */
  async manualRun(name: string): Promise<EnqueueInput> {
    if (typeof name !== 'string') throw new InvalidScheduleError('(unnamed)', `name must be a string; received ${describeValue(name)}`);
    const db = this.connection.db;
    const stored = isScheduleName(name) ? await findSchedule(db, name) : null;
    if (!stored) throw new ScheduleNotFoundError(name);
    const at = await databaseNow(db);
    return { type: stored.type, args: { ...stored.args, slot: at.toISOString(), manual: true }, ...stored.job };
  }

  /** Every schedule, read page by page within a byte budget (see findWholeSchedulesPage). */
  async listSchedules(): Promise<ScheduleView[]> {
    return (await listWholeSchedules(this.connection.db)).map(toView);
  }

  /** A page of schedules by name (see `JobQueueService.findSchedules`). */
  async findSchedules(filter?: ScheduleFilter, options?: FindOptions): Promise<FindSchedulesResult> {
    const db = this.connection.db;
    const { schedules, nextCursor } = await findWholeSchedulesPage(db, filter, options);
    return { schedules: schedules.map(toView), nextCursor };
  }

  /** Enqueues every due slot; one tick at a time per process. Errors are logged, the next tick retries. */
  tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.ticking = this.runTick()
      .catch((err) => this.logger.warn(`recurring tick failed: ${(err as Error)?.message ?? String(err)}`))
      .finally(() => (this.ticking = null));
    return this.ticking;
  }

  private async runTick(): Promise<void> {
    const db = this.connection.db;
    if (performance.now() - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = performance.now();
      const pruned = await pruneLapsedDeclarations(db, PRUNE_LAPSED_AFTER_MS);
      if (pruned) this.logger.log(`recurring: deleted ${pruned} @Recurring schedule(s) that no running process had declared for ${PRUNE_LAPSED_AFTER_MS / 86_400_000} days`);
    }
    // Schedules locked per transaction: fewer while their size cuts the reads short, so each
    // transaction does not weigh 500 rows of megabytes to read a few dozen (MySQL reads them all).
    let lockLimit = SCHEDULES_PER_TICK;
    for (;;) {
      // A slot is missed only if it was due for longer than its grace when the cluster's run of
      // ticks began: within a run, a slot late because the ticks had thousands of schedules to
      // work through is late, not missed, whichever process takes it. One start for all
      // processes: each judging by its own, two replicas that began a second apart and split a
      // tick's schedules skipped different slots of them.
      const continuing = performance.now() - this.lastContact <= STREAK_GAP_MS;
      const runSince = await tickerContact(db, { gapMs: STREAK_GAP_MS, freshMs: CONTACT_FRESH_MS, continuing });
      this.lastContact = performance.now();
      // A process that joined while this one was in a transaction longer than the gap found the
      // row stale and started a run of its own: this one's older run still holds for it.
      const tickingSince = continuing && this.tickingSince && this.tickingSince < runSince ? this.tickingSince : runSince;
      this.tickingSince = tickingSince;
      if (!(await anyScheduleDue(db))) return;
      const { more, ready, enqueued, missed, read, locked } = await withKeyRaceRetry(() =>
        db.transaction(async (tx) => {
          const { now, due, locked } = await lockDueSchedules(tx, lockLimit, CHARS_PER_TICK);
          const missed: string[] = [];
          // All due slots of all locked schedules in one multi-row insert, then one update for all.
          const nodes: GraphNode[] = [];
          const jobs: NormalizedJob[] = [];
          const ticks: TickRecord[] = [];
          // Some were locked but not read (their size), or not planned: more are due.
          let cut = due.length < locked;
          let chars = 0;
          const full = () => jobs.length >= JOBS_PER_TICK || chars >= CHARS_PER_TICK;
          for (const s of due) {
            // The rest are unlocked at commit, still due: the loop goes on.
            if (full()) {
              cut = true;
              break;
            }
            try {
              // A schedule declared again after a lapse was, until then, down like a stopped cluster.
              const since = s.declaredSince && s.declaredSince > tickingSince ? s.declaredSince : tickingSince;
              const plan = planSlots({ cron: s.cron, timeZone: s.timeZone, from: s.nextRunAt, now, misfireGraceMs: s.misfireGraceMs, backfill: s.backfill, tickingSince: since }, this.clock);
              if (plan.missed) missed.push(s.name);
              // Its later slots wait for the next transaction: from the first of them, the next
              // plan finds the same ones again (the latest missed ones, then the on-time ones).
              const mine: GraphNode[] = [];
              const mineJobs: NormalizedJob[] = [];
              let myChars = 0;
              for (const { at, backfill } of plan.slots) {
                if ((jobs.length || mine.length) && chars + myChars >= CHARS_PER_TICK) break;
                const node = this.slotNode(s, at, backfill, `${s.name}@${at.toISOString()}`);
                const job = normalizeJob(node, this.normalizeContext());
                mine.push(node);
                mineJobs.push(job);
                myChars += job.argsJson.length;
              }
              const taken = mine.length;
              if (taken < plan.slots.length) cut = true;
              nodes.push(...mine);
              jobs.push(...mineJobs);
              chars += myChars;
              ticks.push({ name: s.name, last: taken ? plan.slots[taken - 1].at : null, next: taken < plan.slots.length ? plan.slots[taken].at : plan.next });
            } catch (err) {
              // A row that no longer checks out (edited by hand, options tightened) must not stall the others.
              this.logger.warn(`recurring schedule "${s.name}" skipped, tried again in ${BROKEN_RETRY_MS / 1_000} s: ${(err as Error)?.message ?? String(err)}`);
              ticks.push({ name: s.name, last: null, next: new Date(now.getTime() + BROKEN_RETRY_MS) });
            }
          }
          let readyCount = 0;
          const enqueued: Array<{ id: number; type: string; group: string }> = [];
          if (nodes.length) {
            const planned = validateGraph(nodes);
            const inserted = await insertGraph(tx, { planned, jobs, storeRefs: false }, this.connection.autoIncrementStep);
            readyCount = inserted.readyCount;
            for (const i of inserted.fresh) enqueued.push({ id: inserted.ids[i], type: jobs[i].type, group: jobs[i].group });
          }
          if (ticks.length) await recordTicks(tx, ticks);
          if (readyCount && this.options.listenNotify) await notifyInTransaction(tx, 'r');
          // A batch cut short counts as full: more are due.
          return { more: cut || locked >= lockLimit, ready: readyCount, enqueued, missed, read: due.length, locked };
        }),
      );
      this.lastContact = performance.now();
      if (missed.length) this.warnMissed(missed);
      if (this.lifecycle.active && enqueued.length) this.lifecycle.enqueued(enqueued);
      if (ready) this.events.wake();
      // Fewer than a full batch: done; none (all locked by other replicas): theirs to do.
      if (!more) return;
      lockLimit = read < locked ? Math.max(1, 2 * read) : Math.min(SCHEDULES_PER_TICK, 2 * lockLimit);
    }
  }

  /** Slots skipped or backfilled after downtime: said once per transaction, not once per schedule. */
  private warnMissed(names: readonly string[]): void {
    const named = names.slice(0, 5).map((n) => `"${n}"`).join(', ') + (names.length > 5 ? ` and ${names.length - 5} more` : '');
    this.logger.warn(
      `recurring: ${names.length} schedule(s) had slots older than their misfireGraceMs when the workers began ticking (none had ticked, or reached the database, for over 5 s); their backfill option chose which of those run: ${named}`,
    );
  }

  /**
   * Inserts a new schedule, or replaces a changed one (its next slot then counts from now).
   * `declarationTtlMs`: an `@Recurring` declaration's lease; null for `schedule()`, which keeps it until `unschedule()`.
   */
  private async store(def: ScheduleDefinition, declarationTtlMs: number | null): Promise<void> {
    const db = this.connection.db;
    // The jobs it will enqueue must be valid too (args size, group): fail now, not at every tick.
    normalizeJob(this.slotNode(def, new Date(0), true, '0'), this.normalizeContext());
    const existing = await findSchedule(db, def.name);
    // Unchanged: not rewritten, so a restart does not move its next slot (backfill after downtime).
    if (existing && sameDefinition(existing, def)) return this.keepDeclaration(existing, def.name, declarationTtlMs);
    const now = await databaseNow(db);
    const next = nextSlot(new CronTime(def.cron, def.timeZone), def.timeZone, now);
    if (existing) return updateScheduleDefinition(db, def, next, declarationTtlMs);
    try {
      await insertSchedule(db, def, next, declarationTtlMs);
    } catch (err) {
      // Another replica stored it first, at its start-up: the same definition, or the last wins.
      if (!isUniqueViolation(err)) throw err;
      const raced = await findSchedule(db, def.name);
      if (raced && !sameDefinition(raced, def)) await updateScheduleDefinition(db, def, next, declarationTtlMs);
      else if (raced) await this.keepDeclaration(raced, def.name, declarationTtlMs);
    }
  }

  /** An unchanged schedule stored again: a decorator renews (or takes over) its declaration; `schedule()` makes it a runtime one. */
  private async keepDeclaration(existing: StoredSchedule, name: string, declarationTtlMs: number | null): Promise<void> {
    if (declarationTtlMs !== null) return declareSchedule(this.connection.db, name, declarationTtlMs);
    if (existing.declaredUntil !== null) await declareSchedule(this.connection.db, name, null);
  }

  private slotNode(s: ScheduleDefinition, at: Date, backfill: boolean, ref: string): GraphNode {
    return {
      ref,
      type: s.type,
      args: { ...s.args, slot: at.toISOString(), ...(backfill ? { backfill: true } : {}) },
      key: slotKey(s.name, at),
      ...s.job,
    };
  }

  private normalizeContext(): NormalizeContext {
    return {
      maxArgsBytes: this.options.maxArgsBytes,
      defaultMaxAttempts: this.options.defaultMaxAttempts,
      defaultTimeoutMs: this.options.defaultTimeoutMs,
      groupWeights: this.options.groupWeights,
      handlerDefaults: (type) => this.registry.get(type)?.options,
    };
  }
}

function sameDefinition(a: ScheduleDefinition, b: ScheduleDefinition): boolean {
  const key = (d: ScheduleDefinition) =>
    JSON.stringify([d.cron, d.timeZone, d.type, d.args, String(d.backfill), d.misfireGraceMs, d.job]);
  return key(a) === key(b);
}

function toView(s: StoredSchedule): ScheduleView {
  return {
    name: s.name,
    cron: s.cron,
    timeZone: s.timeZone,
    type: s.type,
    args: s.args,
    backfill: s.backfill,
    misfireGraceMs: s.misfireGraceMs,
    ...s.job,
    nextRunAt: s.nextRunAt,
    lastRunAt: s.lastSlot,
    declaredUntil: s.declaredUntil,
  };
}

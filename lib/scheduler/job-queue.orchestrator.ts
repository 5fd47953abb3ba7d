import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { allLimitLockNames, ensureLimitRows } from '../claim/limit-locks.sql';
import { allRateLimitNames, ensureRateLimitRows } from '../rate-limit/rate-limit.sql';
import { claimWeightsOf, ensureWeightSet } from '../claim/weight-sets.sql';
import { JobQueueConnection } from '../database/job-queue.connection';
import { JobQueueEvents } from '../events/job-queue.events';
import { FinalizeService } from '../finalize/finalize.service';
import { JobHandlerRegistry } from '../handlers/job-handler.registry';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { announcesReadyTo } from '../notify/notify.sql';
import { PgNotifyListener } from '../notify/pg-notify.listener';
import { SettledNotifier } from '../notify/settled.notifier';
import { PausedWork } from '../pause/paused-work';
import { SweepsService } from '../sweeps/sweeps.service';
import { JobWaiters } from '../waiters/job-waiters.service';
import { SchedulerService } from './scheduler.service';
import { ShutdownClock } from './shutdown-clock';
import type { ShutdownDeadline } from './shutdown-deadline';
import { JobLifecycle } from '../events/job-lifecycle';

const TIMERS = ['poll', 'heartbeat', 'reclaim', 'timeout', 'retention', 'pause', 'weights'] as const;

/** How often a process marks its stored weight set seen (see ensureWeightSet). */
const WEIGHT_SET_MARK_MS = 86_400_000;

/**
 * Owns the timers and the order of start and shutdown.
 *
 * Start (after every module's init, so all handlers are registered): limit rows, LISTEN,
 * the poll / heartbeat / sweep intervals (in @nestjs/schedule's SchedulerRegistry), then the
 * scheduler. A process without handlers, or with `worker: false`, only enqueues.
 *
 * Shutdown: `beforeApplicationShutdown` stops claiming, lets running jobs finish within the
 * grace period (leases still renewed), hands back the rest, and writes the last results,
 * all before any `onApplicationShutdown` (where TypeORM modules close their DataSources);
 * our own DataSource is closed last, in `onApplicationShutdown`.
 */
@Injectable()
export class JobQueueOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('JobQueue');
  private started = false;

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly connection: JobQueueConnection,
    private readonly scheduler: SchedulerService,
    private readonly sweeps: SweepsService,
    private readonly finalizer: FinalizeService,
    private readonly handlers: JobHandlerRegistry,
    private readonly listener: PgNotifyListener,
    private readonly events: JobQueueEvents,
    private readonly timers: SchedulerRegistry,
    private readonly waiters: JobWaiters,
    private readonly settledNotifier: SettledNotifier,
    private readonly paused: PausedWork,
    private readonly lifecycle: JobLifecycle,
    private readonly clock: ShutdownClock,
  ) {
    clock.whenPassed(() => this.finalizer.giveUpUnwritten());
  }

  async onApplicationBootstrap(): Promise<void> {
    const types = this.handlers.types();
    if (!this.options.worker || !types.length) {
      this.logger.log(`enqueue-only (${this.options.worker ? 'no @JobHandler methods found' : 'worker: false'})`);
      return;
    }
    // In transactions, which retry a deadlock: workers starting together insert the same rows.
    await this.connection.db.transaction((tx) => ensureLimitRows(tx, allLimitLockNames(this.options.limits)));
    await this.connection.db.transaction((tx) => ensureRateLimitRows(tx, allRateLimitNames(this.options.rateLimits)));
    // PostgreSQL: thousands of `groupWeights` are stored once for the rotation claim to look up.
    await this.markWeightSet();
    if (this.options.dialect === 'postgres' && this.options.listenNotify) {
      await this.listener.start(this.connection.dataSource, (payload) => this.onNotification(payload));
    }
    const o = this.options;
    // Paused types and groups (persisted) hold from the first claim; re-read every half poll
    // interval, so a pause reaches every worker within one, and at once on a notification.
    await this.paused.refresh();
    this.every('pause', Math.max(10, Math.floor(o.pollIntervalMs / 2)), () => this.paused.readQueued || this.refreshPaused());
    this.every('poll', o.pollIntervalMs, () => this.scheduler.trigger());
    this.every('heartbeat', o.heartbeatIntervalMs, () => this.scheduler.heartbeat());
    this.every('reclaim', o.reclaimIntervalMs, () => this.sweeps.reclaim());
    this.every('timeout', o.timeoutSweepIntervalMs, () => this.sweeps.failOverdue());
    if (o.retention) this.every('retention', o.retention.intervalMs, () => this.sweeps.retain());
    if (claimWeightsOf(o.groupWeights).setId && o.dialect === 'postgres') this.every('weights', WEIGHT_SET_MARK_MS, () =>
        this.markWeightSet().catch((err) => this.logger.warn(`could not mark the stored group weights seen (${(err as Error).message}); retrying tomorrow`)),
      );
    this.scheduler.start();
    this.started = true;
    this.logger.log(
      `worker ${o.workerId} on ${this.connection.server.product} ${this.connection.server.version.join('.')}: ` +
        `${types.length} job type(s), concurrency ${o.concurrency}`,
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    const deadline = this.shutdownDeadline();
    for (const name of ['poll', 'pause', 'reclaim', 'timeout', 'retention', 'weights'] as const) this.clear(name);
    await deadline.wait(this.listener.stop(), 'the LISTEN connection');
    await deadline.wait(this.paused.idle(), 'a read of the paused types and groups');
    await deadline.wait(this.sweeps.idle(), 'a sweep');
    const drained = this.scheduler.drain(this.options.shutdownGraceMs);
    if (await deadline.wait(drained, 'the running jobs and their hand-back')) {
      const { finished, handedBack } = await drained;
      if (finished || handedBack) this.logger.log(`shutdown: ${finished} job(s) finished, ${handedBack} handed back`);
    }
    await deadline.wait(this.finalizer.drain(), 'the last results');
    this.clear('heartbeat');
  }

  async onApplicationShutdown(): Promise<void> {
    const deadline = this.shutdownDeadline();
    await deadline.wait(this.finalizer.drain(), 'the last results'); // enqueue-only processes have nothing here; workers drained above
    await deadline.wait(this.lifecycle.drain(), 'lifecycle events'); // lifecycle events of the drains above, while their views can still be read
    this.lifecycle.close();
    await deadline.wait(this.settledNotifier.close(), 'announcing settled jobs'); // announces what the drains settled while the connection is open
    // Waiters resolved by the drain above have been; the rest fail with a typed error now,
    // before the DataSource closes under their next poll.
    await deadline.wait(this.waiters.close(), 'the waiters');
    await this.connection.close((work, what) => deadline.wait(work, what));
  }

  /** The shutdown's deadline, shared with the other providers' hooks (see ShutdownClock). */
  private shutdownDeadline(): ShutdownDeadline {
    return this.clock.deadline();
  }

  private onNotification(payload: string): void {
    if (announcesReadyTo(payload, this.options.workerId)) this.scheduler.trigger();
    else if (payload === 'p') void this.refreshPaused();
    else if (payload.startsWith('c:')) this.events.cancelled([Number(payload.slice(2))]);
  }

  private markWeightSet(): Promise<void> {
    if (this.options.dialect !== 'postgres' || !claimWeightsOf(this.options.groupWeights).setId) return Promise.resolve();
    return this.connection.db.transaction((tx) => ensureWeightSet(tx, this.options.groupWeights));
  }

  private refreshPaused(): Promise<void> {
    return this.paused.refresh().catch((err) => this.logger.warn(`could not read paused types and groups (${(err as Error).message}); retrying`));
  }

  private every(name: (typeof TIMERS)[number], ms: number, run: () => unknown): void {
    // Not unref'd: a worker process runs until it is shut down, even when nothing else (an
    // HTTP server, a connection pool) holds the event loop, as with SQLite.
    this.timers.addInterval(this.timerName(name), setInterval(() => void run(), ms));
  }

  private clear(name: (typeof TIMERS)[number]): void {
    const key = this.timerName(name);
    if (this.timers.doesExist('interval', key)) this.timers.deleteInterval(key);
  }

  /** Unique per module instance: several queues (or test apps) can share one registry. */
  private timerName(name: string): string {
    return `job-queue:${this.options.workerId}:${name}`;
  }
}

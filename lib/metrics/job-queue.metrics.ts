import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Counter, Gauge, Histogram, register as globalRegistry, type Registry } from 'prom-client';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JobLifecycle } from '../events/job-lifecycle';
import type { JobEventName } from '../events/job-event.types';
import type { JobSignal, JobSignalSink } from '../events/job-signal';
import type { JobState } from '../job.types';
import { CachedRead, type ReadPace } from '../stats/cached-read';
import { countFailingSchedules } from '../recurring/last-slot-key.sql';
import { readOldestReadyAgeMs } from '../stats/oldest-ready.sql';
import { countStates, OPEN_STATES, TERMINAL_STATES } from '../stats/state-counts.sql';
import { METRIC_NAMES, METRICS_OPTIONS } from './metrics.constants';
import type { ResolvedMetricsOptions } from './metrics.options';

const COUNTED = new Set<JobEventName>(['enqueued', 'completed', 'failed', 'retrying', 'snoozed']);
/**
 * How long a scrape waits for the gauges' database read before it answers with their last values.
 * Well under Prometheus' default scrape_timeout (10 s): a database that stopped answering held the
 * scrape until it timed out, and the counters of that scrape were lost with the gauges.
 */
export const GAUGE_READ_WAIT_MS = 3_000;

/**
 * done/failed/cancelled count every finished job kept, so counting them costs more as the table
 * grows (1,000,000 rows: 106 ms on PostgreSQL, 149 ms on MariaDB, 94 ms on SQLite in slices).
 * They are recounted after 100 times as long as their last count took (at most 1% of the time),
 * and at least every 5 minutes.
 */
export const FINISHED_COUNT_PACE: ReadPace = { factor: 100, maxMs: 300_000 };
/**
 * The open states cost what the backlog is: 27-31 ms at 200,000 ready jobs, 120-360 ms at
 * 2,000,000. Kept 20 times as long as their count took (at most 5% of the time), at most 15 s:
 * counted on every read until a count takes cacheMs / 20 (250 ms by default). The cap also
 * bounds how stale they stay after a read that a stalled server held (its time counts as cost).
 */
export const OPEN_COUNT_PACE: ReadPace = { factor: 20, maxMs: 15_000 };
/**
 * The oldest ready age costs a few probes per (type, priority) of the ready jobs, on MySQL a
 * statement each: 2.5-3.5 s with 5,000 types on MariaDB, read again every cacheMs while scraped.
 * Paced like the open states: kept 20 times as long as it took, at most 15 s.
 */
export const OLDEST_READY_PACE: ReadPace = { factor: 20, maxMs: 15_000 };
/**
 * The failing schedules' count looks up every schedule's last slot job (10,000 schedules: 11-41 ms
 * by dialect). Paced like the open states: kept 20 times as long as it took, at most 15 s.
 */
export const FAILING_SCHEDULES_PACE: ReadPace = { factor: 20, maxMs: 15_000 };

/**
 * The queue's Prometheus metrics. Counters and histograms follow the lifecycle reports of this
 * process (no database work: per process, like any Prometheus counter; sum them across pods).
 * The gauges that need the database are read on scrape, once per `cacheMs` however many
 * scrapers ask, and are cluster-wide (the same value from every pod: use max() in queries).
 */
@Injectable()
export class JobQueueMetrics implements OnModuleInit, OnApplicationShutdown, JobSignalSink {
  readonly registry: Registry;
  private readonly oldestReady: CachedRead<number>;
  private readonly open: CachedRead<Partial<Record<JobState, number>>>;
  private readonly finished: CachedRead<Partial<Record<JobState, number>>>;
  private readonly failingSchedules: CachedRead<number>;
  private readonly enqueued: Counter<string>;
  private readonly completed: Counter<string>;
  private readonly failed: Counter<string>;
  private readonly retried: Counter<string>;
  private readonly snoozed: Counter<string>;
  private readonly duration: Histogram<string>;
  private readonly wait: Histogram<string>;
  /** The metrics this instance registered (see onModuleDestroy). */
  private readonly own = new Set<object>();

  constructor(
    @Inject(METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions,
    db: JobQueueDatabase,
    private readonly lifecycle: JobLifecycle,
  ) {
    this.registry = options.registry ?? globalRegistry;
    // A second app in the same process (tests, hot reload) replaces the first's.
    for (const name of Object.values(METRIC_NAMES)) this.registry.removeSingleMetric(name);
    const registers = [this.registry];
    const labelNames = options.groupLabel ? ['type', 'group'] : ['type'];
    // Four reads, cached apart, each paced by its own cost.
    this.oldestReady = new CachedRead(() => readOldestReadyAgeMs(db), options.cacheMs, Date.now, OLDEST_READY_PACE);
    this.open = new CachedRead(() => countStates(db, OPEN_STATES), options.cacheMs, Date.now, OPEN_COUNT_PACE);
    this.finished = new CachedRead(() => countStates(db, TERMINAL_STATES), options.cacheMs, Date.now, FINISHED_COUNT_PACE);
    this.failingSchedules = new CachedRead(() => countFailingSchedules(db), options.cacheMs, Date.now, FAILING_SCHEDULES_PACE);
    this.enqueued = new Counter({ name: METRIC_NAMES.enqueued, help: 'Jobs enqueued by this process.', labelNames, registers });
    this.completed = new Counter({ name: METRIC_NAMES.completed, help: 'Jobs completed (done) in transactions this process committed.', labelNames, registers });
    this.failed = new Counter({ name: METRIC_NAMES.failed, help: 'Jobs failed for good in transactions this process committed.', labelNames, registers });
    this.retried = new Counter({ name: METRIC_NAMES.retried, help: 'Failed attempts scheduled to run again (incl. reclaimed leases).', labelNames, registers });
    this.snoozed = new Counter({ name: METRIC_NAMES.snoozed, help: 'Attempts that snoozed (ctx.snooze): run again later without spending an attempt.', labelNames, registers });
    this.duration = new Histogram({
      name: METRIC_NAMES.duration,
      help: 'Handler run time per attempt run by this process, in seconds.',
      labelNames,
      buckets: options.buckets,
      registers,
    });
    this.wait = new Histogram({
      name: METRIC_NAMES.wait,
      help: 'Time from when a job became claimable (run_after) to the start of its attempt, in seconds.',
      labelNames,
      buckets: options.buckets,
      registers,
    });
    const { oldestReady, open, finished, failingSchedules } = this;
    const jobs = new Gauge({
      name: METRIC_NAMES.jobs,
      help:
        'Jobs per state, cluster-wide (read on scrape, cached; a count is kept 20 times as long as it took, ' +
        'done/failed/cancelled 100 times, so that counting a large table takes a bounded share of the time).',
      labelNames: ['state'],
      registers,
      async collect() {
        // A failed or unanswered read keeps the last values rather than failing the whole scrape.
        const counts = await Promise.all([open.getWithin(GAUGE_READ_WAIT_MS), finished.getWithin(GAUGE_READ_WAIT_MS)]);
        for (const some of counts) if (some) for (const [state, n] of Object.entries(some)) this.set({ state }, n);
      },
    });
    const oldestReadyAge = new Gauge({
      name: METRIC_NAMES.oldestReadyAge,
      help:
        'Age of the longest-waiting claimable job, in seconds (0 when none), cluster-wide. Read from at most 100 jobs per type and priority: ' +
        'exact unless 100 jobs of one type and priority were due before its oldest became claimable (promoted after their dependencies, ' +
        'or handed back); then the longest wait among those 100, never more than the true age.',
      registers,
      async collect() {
        const ageMs = await oldestReady.getWithin(GAUGE_READ_WAIT_MS);
        if (ageMs !== undefined) this.set(ageMs / 1000);
      },
    });
    const failing = new Gauge({
      name: METRIC_NAMES.failingSchedules,
      help:
        "Recurring schedules whose last slot's job failed, cluster-wide (findSchedules({ lastRunState: 'failed' })): " +
        'a schedule is counted from the failure of its last run until its next slot is enqueued or that job is retried. Read on scrape, cached.',
      registers,
      async collect() {
        const n = await failingSchedules.getWithin(GAUGE_READ_WAIT_MS);
        if (n !== undefined) this.set(n);
      },
    });
    for (const m of [this.enqueued, this.completed, this.failed, this.retried, this.snoozed, this.duration, this.wait, jobs, oldestReadyAge, failing]) this.own.add(m);
  }

  /** Reads of the oldest ready age the gauges have made (ten concurrent scrapes within `cacheMs`: one). */
  get statsReads(): number {
    return this.oldestReady.reads;
  }

  onModuleInit(): void {
    this.lifecycle.addSink(this);
  }

  /**
   * Not in onModuleDestroy: that runs before the shutdown's drain, while an HTTP app still
   * serves /metrics, and every scrape during the drain lacked the queue's series (the jobs
   * finished in it were never exported).
   */
  onApplicationShutdown(): void {
    // Only those still ours: a later app's replaced them, and an earlier app's close took the
    // later app's metrics with its own (its /metrics went empty for the rest of the process).
    for (const name of Object.values(METRIC_NAMES)) {
      const metric = this.registry.getSingleMetric(name);
      if (metric && this.own.has(metric)) this.registry.removeSingleMetric(name);
    }
  }

  needsView(): boolean {
    return false;
  }

  /** Counters need the type; jobs reported without one (cascades, roll-ups, sweeps: rare) are read in a batch. */
  needsType(event: JobEventName): boolean {
    return COUNTED.has(event);
  }

  deliver(signals: readonly JobSignal[]): void {
    for (const s of signals) {
      if (s.type === undefined) continue; // deleted before it could be read
      const labels = this.options.groupLabel ? { type: s.type, group: s.group ?? '' } : { type: s.type };
      switch (s.event) {
        case 'enqueued':
          this.enqueued.inc(labels);
          break;
        case 'started':
          if (s.waitMs !== undefined) this.wait.observe(labels, s.waitMs / 1000);
          break;
        case 'completed':
          this.completed.inc(labels);
          break;
        case 'failed':
          this.failed.inc(labels);
          break;
        case 'retrying':
          this.retried.inc(labels);
          break;
        case 'snoozed':
          this.snoozed.inc(labels);
          break;
      }
      if (s.durationMs !== undefined) this.duration.observe(labels, s.durationMs / 1000);
    }
  }
}

import { Inject, Injectable, Optional } from '@nestjs/common';
import { JobQueueDatabase } from './database/job-queue.database';
import { jobColumns, toJobRecord, toJobView } from './database/job-row';
import { sql } from './database/sql';
import type { SqlExecutor } from './database/sql-executor';
import { assertGraphSize } from './graph/graph-size';
import { insertGraph, withKeyRaceRetry, type InsertedGraph, type PreparedGraph } from './enqueue/graph-enqueuer';
import { keyConflict } from './enqueue/key-conflict';
import { insertOneJobPostgres } from './enqueue/job-insert.sql';
import { insertKeyed, type KeyedOutcome } from './enqueue/keyed-enqueue';
import { isTransientConflict, isUniqueViolation } from './database/db-errors';
import { normalizeJob, type NormalizeContext } from './enqueue/normalize-job';
import { InvalidJobError, InvalidJobStateError, JobNotFoundError, UnknownJobTypeError } from './errors';
import { JobQueueEvents } from './events/job-queue.events';
import { JobLifecycle } from './events/job-lifecycle';
import { cancelJob } from './finalize/cancel.sql';
import { retryJob } from './finalize/retry.sql';
import { notifyInTransaction } from './notify/notify.sql';
import type { QueueStats } from './stats/queue-stats';
import { readQueueStats } from './stats/queue-stats.sql';
import { normalizeStatsOptions, type StatsOptions } from './stats/stats-options';
import { validateGraph } from './graph/validate-graph';
import { assertUniqueKeys } from './graph/unique-keys';
import { JobHandlerRegistry } from './handlers/job-handler.registry';
import { JOB_QUEUE_OPTIONS } from './job-queue.constants';
import type { ResolvedJobQueueOptions } from './job-queue.options';
import { type EnqueueInput, type EnqueueOptions, type GraphIds, type GraphNode, type JobView } from './job.types';
import type { JobTypeName, LooseOnly, TypedEnqueueInput, TypedGraphNode, TypedJobView } from './typing/job-types';
import { JobQueueConnection } from './database/job-queue.connection';
import { JobWaiters, type WaitForOptions } from './waiters/job-waiters.service';
import { JobAdminService } from './query/job-admin.service';
import { PauseService } from './pause/pause.service';
import type { PauseTarget } from './pause/pause-target';
import type { FindPausedResult, PausedFilter } from './pause/paused-filter';
import { JobQueryService, type JobGraph } from './query/job-query.service';
import { JobLogService } from './logs/job-log.service';
import type { JobLogPage, JobLogQuery } from './logs/job-log.types';
import type { FindOptions, FindResult, JobFilter } from './query/job-filter';
import type { RescheduleInput } from './query/reschedule-input';
import { RecurringService } from './recurring/recurring.service';
import { JobArgsValidator } from './validation/job-args.validator';
import { AppTransactionGuard } from './enqueue/app-transaction.guard';
import type { ScheduleInput } from './recurring/schedule-definition';
import type { ScheduleView } from './recurring/schedule-view';
import type { FindSchedulesResult, ScheduleFilter } from './recurring/schedule-filter';
import { soonestSchedules } from './recurring/schedules.sql';
import { JOB_QUEUE_INSTRUMENTATION, type JobQueueInstrumentation } from './instrumentation/job-queue.instrumentation';
import { storedCreation } from './instrumentation/stored-trace';

export type { WaitForOptions } from './waiters/job-waiters.service';

/** Enqueue graphs and single jobs, read them back, cancel, retry, wait, and watch the queue. */
@Injectable()
export class JobQueueService {
  private readonly db: JobQueueDatabase;

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly connection: JobQueueConnection,
    private readonly registry: JobHandlerRegistry,
    private readonly events: JobQueueEvents,
    private readonly waiters: JobWaiters,
    private readonly queries: JobQueryService,
    private readonly admin: JobAdminService,
    private readonly pauses: PauseService,
    private readonly recurring: RecurringService,
    private readonly argsValidator: JobArgsValidator,
    private readonly appTransaction: AppTransactionGuard,
    private readonly lifecycle: JobLifecycle,
    private readonly logs: JobLogService,
    @Optional() @Inject(JOB_QUEUE_INSTRUMENTATION) private readonly instrumentation?: JobQueueInstrumentation,
  ) {
    this.db = connection.db;
  }

  /**
   * Enqueues one job and returns it. With `{ manager }` the insert joins that TypeORM
   * transaction. A `key` that already exists returns the existing job.
   */
  /** Without a `JobTypes` declaration: the loose form of before (args type inferred or given). */
  enqueue<TArgs, TResult = unknown>(input: LooseOnly<EnqueueInput<TArgs>>, options?: EnqueueOptions): Promise<JobView<TArgs, TResult>>;
  /** With `JobTypes` declared: `type` must be declared and `args` match it. */
  enqueue<T extends JobTypeName>(input: TypedEnqueueInput<T>, options?: EnqueueOptions): Promise<TypedJobView<T>>;
  enqueue<TArgs, TResult>(input: EnqueueInput<TArgs>, options: EnqueueOptions = {}): Promise<JobView<TArgs, TResult>> {
    return this.enqueueOne(input, options, true);
  }

  /** `enqueue`; `checkType` false for a job whose type was checked when it was stored (a schedule's). */
  private async enqueueOne<TArgs, TResult>(input: EnqueueInput<TArgs>, options: EnqueueOptions, checkType: boolean): Promise<JobView<TArgs, TResult>> {
    const graph = this.prepare([{ ...input, ref: 'job' } as GraphNode], false, checkType);
    await this.argsValidator.assertValid([input], false);
    const executor = options.manager ? this.db.executorFor(options.manager) : this.db;
    if (this.db.dialect.name === 'postgres' && graph.jobs[0].key === null) {
      // The common case in one statement: insert, notify, return the row; traced, with its carrier.
      const job = graph.jobs[0];
      const trace = this.instrumentation?.onEnqueue([{ type: job.type, group: job.group, ref: 'job', container: false }]);
      let rows;
      try {
        const carrier = trace ? storedCreation(trace.carriers[0], false) : null;
        ({ rows } = await executor.run(insertOneJobPostgres(job, this.options.listenNotify, jobColumns(this.db.dialect), carrier)));
      } catch (err) {
        trace?.end(null, err);
        throw err;
      }
      trace?.end([Number(rows[0].id)]);
      if (!options.manager) this.events.wake();
      const view = toJobView(toJobRecord(rows[0], this.db.dialect));
      if (this.lifecycle.active) this.lifecycle.enqueued([view], options.manager, view);
      return view as JobView<TArgs, TResult>;
    }
    const [id] = graph.jobs[0].keyMode === 'forever' ? await this.write(graph, options) : [await this.writeKeyed(graph, options)];
    return (await this.read(id, executor)) as JobView<TArgs, TResult>;
  }

  /**
   * Enqueues a DAG in one transaction, all or nothing, and returns `{ [ref]: id }`. `dependsOn`
   * names refs of this graph or ids of existing jobs; `parent` makes a node the child of a
   * container node. Invalid graphs throw a `GraphValidationError` and write nothing.
   */
  async enqueueGraph<TRef extends string = string>(
    nodes: ReadonlyArray<TypedGraphNode & { ref: TRef }>,
    options: EnqueueOptions = {},
  ): Promise<GraphIds<TRef>> {
    if (!Array.isArray(nodes)) throw new InvalidJobError('(graph)', 'an array of nodes', nodes);
    const graph = this.prepare(nodes as readonly GraphNode[], true);
    await this.argsValidator.assertValid(nodes, true);
    const ids = nodes.length ? await this.write(graph, options) : [];
    const out = {} as GraphIds<TRef>;
    nodes.forEach((node, i) => (out[node.ref as TRef] = ids[i]));
    return out;
  }

  /** The job, or null if no job has this id. */
  get<TArgs = unknown, TResult = unknown>(id: LooseOnly<number>): Promise<JobView<TArgs, TResult> | null>;
  get<T extends JobTypeName = JobTypeName>(id: number): Promise<TypedJobView<T> | null>;
  async get<TArgs, TResult>(id: number): Promise<JobView<TArgs, TResult> | null> {
    return (await this.read(id, this.db)) as JobView<TArgs, TResult> | null;
  }

  /**
   * Cancels a job that has not finished (waiting, ready or running) and returns it. A running
   * job's `ctx.signal` aborts and its result is discarded; a container cancels its unfinished
   * subtree; dependents are cancelled in turn. Cancelling a finished job changes nothing.
   */
  async cancel(id: number): Promise<JobView> {
    assertId(id);
    const outcome = await this.db.transaction(async (tx) => {
      const result = await cancelJob(tx, id);
      if (this.options.listenNotify) for (const running of result.wereRunning) await notifyInTransaction(tx, `c:${running}`);
      return { ...result, job: result.found ? await this.read(id, tx) : null };
    });
    if (!outcome.found) throw new JobNotFoundError(id);
    this.events.cancelled(outcome.wereRunning);
    this.events.settled(outcome.settled);
    return outcome.job!;
  }

  /**
   * Runs a failed or cancelled job again (attempts start over), re-opening the dependents that
   * were cancelled because of it and the containers that failed with it.
   */
  async retry(id: number): Promise<JobView> {
    assertId(id);
    const outcome = await this.db.transaction(async (tx) => {
      const result = await retryJob(tx, id);
      if (result.reopened.length && this.options.listenNotify) await notifyInTransaction(tx, 'r');
      // As this retry left it: a worker may claim it the moment the transaction commits.
      return { ...result, job: result.reopened.length ? await this.read(id, tx) : null };
    });
    if (!outcome.found) throw new JobNotFoundError(id);
    if (!outcome.reopened.length) throw new InvalidJobStateError(id, outcome.previousState!, 'retry', ['failed', 'cancelled']);
    this.events.settled(outcome.settled);
    this.events.wake();
    return outcome.job!;
  }

  /**
   * Resolves with the job once it is `done`, `failed` or `cancelled`; rejects with
   * `WaitForTimeoutError` after `timeoutMs`, `JobNotFoundError` for an unknown id, and
   * `WaitForShutdownError` if the application closes first. All waiters of a process share one
   * watcher (JobWaiters): one poll per interval for all of them, notifications on PostgreSQL.
   */
  waitFor<TArgs = unknown, TResult = unknown>(id: LooseOnly<number>, options?: WaitForOptions): Promise<JobView<TArgs, TResult>>;
  waitFor<T extends JobTypeName = JobTypeName>(id: number, options?: WaitForOptions): Promise<TypedJobView<T>>;
  async waitFor<TArgs, TResult>(id: number, options: WaitForOptions = {}): Promise<JobView<TArgs, TResult>> {
    return (await this.waiters.wait(id, options)) as JobView<TArgs, TResult>;
  }

  /**
   * Counts by state, the busiest groups, the oldest ready job's age, the recent failure rate and
   * mean duration, and the schedules due soonest; bounded lists (`groupsLimit`, `schedulesLimit`).
   * Bad options: InvalidQueryError, nothing read.
   */
  async stats(options: StatsOptions = {}): Promise<QueueStats> {
    const o = normalizeStatsOptions(options);
    const [stats, schedules] = await Promise.all([readQueueStats(this.db, o.windowMs, o.groupsLimit), soonestSchedules(this.db, o.schedulesLimit)]);
    return { ...stats, schedules: schedules.schedules, scheduleCount: schedules.count };
  }

  /**
   * Creates or replaces a recurring schedule (persisted; every worker process enqueues its slots,
   * each once across the cluster). Invalid cron, time zone or options: InvalidScheduleError, nothing written.
   */
  schedule(input: ScheduleInput): Promise<ScheduleView> {
    return this.recurring.schedule(input);
  }

  /** Removes a recurring schedule; true if it existed. Jobs already enqueued stay. */
  unschedule(name: string): Promise<boolean> {
    return this.recurring.unschedule(name);
  }

  /**
   * Runs schedule `name` once now, outside its slots (the dashboard's "Run now"): enqueues the job
   * a slot would, with `args.slot` at the database's now and `args.manual: true`. Its next slot
   * does not move. Unknown name: ScheduleNotFoundError, nothing enqueued. Its type is not checked
   * against `strictTypes` here, as a tick does not check it: a process without the handler (a
   * web process serving the dashboard) runs the schedules of the workers' types.
   */
  async triggerSchedule(name: string): Promise<JobView> {
    return this.enqueueOne(await this.recurring.manualRun(name), {}, false);
  }

  /** Every recurring schedule with its next and last slot (for thousands of them, page with `findSchedules`). */
  listSchedules(): Promise<ScheduleView[]> {
    return this.recurring.listSchedules();
  }

  /**
   * A page of recurring schedules by name, optionally one by name, of a job type or group, or
   * those whose last run is in some states (`lastRunState: 'failed'`: the failing ones), as `find`
   * pages jobs: `limit` 1–500 (default 50), `nextCursor` for the next page. Bad input: InvalidQueryError.
   */
  findSchedules(filter?: ScheduleFilter, options?: FindOptions): Promise<FindSchedulesResult> {
    return this.recurring.findSchedules(filter, options);
  }

  /**
   * A page of jobs matching `filter` (fields combined with AND), newest first. Pass
   * `nextCursor` back as `cursor` for the next page; it is null after the last one.
   * Invalid filters, limits (1–500) and cursors throw `InvalidQueryError`.
   */
  find<TArgs = unknown, TResult = unknown>(filter: JobFilter = {}, options: FindOptions = {}): Promise<FindResult<TArgs, TResult>> {
    return this.queries.find<TArgs, TResult>(filter, options);
  }

  /** Every job connected to this one by dependencies or containment (up to 10,000, then `truncated`). */
  getGraph(id: number): Promise<JobGraph> {
    return this.queries.getGraph(id);
  }

  /**
   * A page of the lines a job's handler wrote with `ctx.log()`, by attempt and then in the order
   * written (`{ attempt }` for one attempt's); pass `nextCursor` back as `cursor` for the next page.
   */
  getLogs(id: number, query: JobLogQuery = {}): Promise<JobLogPage> {
    return this.logs.getLogs(id, query);
  }

  /**
   * Retries every failed or cancelled job the filter selects, as `retry(id)` would (dependents
   * re-open), in short transactions of 500 jobs. Resolves with how many it retried. A filter
   * without a condition is an `InvalidQueryError`: `{ state: 'failed' }` selects every failed job.
   */
  retryMany(filter: JobFilter): Promise<{ count: number }> {
    return this.admin.retryMany(filter);
  }

  /**
   * Cancels every unfinished job the filter selects, as `cancel(id)` would (dependents and
   * container subtrees too), in short transactions of 500 jobs. Resolves with how many it cancelled.
   * A filter without a condition is an `InvalidQueryError`.
   */
  cancelMany(filter: JobFilter): Promise<{ count: number }> {
    return this.admin.cancelMany(filter);
  }

  /**
   * Runs a delayed job now: a waiting or ready job's `runAfter` (its delay, or its retry backoff)
   * becomes now, and the workers are woken. Pause, caps and rate limits still apply. A job already
   * due is returned unchanged; JobNotFoundError, or InvalidJobStateError once it is claimed or finished.
   */
  async runNow(id: number): Promise<JobView> {
    assertId(id);
    return this.admin.runNow(id);
  }

  /**
   * `runNow` of every waiting or ready job the filter selects, in short transactions of 500 jobs.
   * Resolves with how many jobs' start moved. A filter without a condition is an `InvalidQueryError`.
   */
  runNowMany(filter: JobFilter): Promise<{ count: number }> {
    return this.admin.runNowMany(filter);
  }

  /**
   * Changes when a job that has not started may start (`runAfter`; a past time means now) and/or
   * its `priority`, and wakes the workers: to push a batch past a maintenance window, or let one
   * tenant's urgent job jump the line. Pause, caps and rate limits still apply. Bad input:
   * InvalidJobError, nothing changed; JobNotFoundError, or InvalidJobStateError once it is claimed
   * or finished.
   */
  async reschedule(id: number, input: RescheduleInput): Promise<JobView> {
    assertId(id);
    return this.admin.reschedule(id, input);
  }

  /**
   * `reschedule` of every waiting or ready job the filter selects, in short transactions of 500
   * jobs. Resolves with how many changed. A filter without a condition is an `InvalidQueryError`.
   */
  rescheduleMany(filter: JobFilter, input: RescheduleInput): Promise<{ count: number }> {
    return this.admin.rescheduleMany(filter, input);
  }

  /**
   * Deletes a finished (done, failed or cancelled) job with its edges, for good. Throws
   * JobNotFoundError, InvalidJobStateError for an unfinished job (cancel it first), and
   * JobStillNeededError while unfinished work is tied to it (a dependent that may read its result,
   * its open container). Nothing is removed when it throws.
   */
  async remove(id: number): Promise<void> {
    assertId(id);
    return this.admin.remove(id);
  }

  /**
   * Deletes every finished job the filter selects, as `remove(id)` would, in short transactions of
   * 500 jobs; jobs unfinished work is still tied to stay. Resolves with how many it removed. A
   * filter without a condition is an `InvalidQueryError`: `{ state: 'done' }` selects every done job.
   */
  removeMany(filter: JobFilter): Promise<{ count: number }> {
    return this.admin.removeMany(filter);
  }

  /**
   * Stops every worker of the cluster from starting jobs of this type or group, within one poll
   * interval (at once on PostgreSQL). Running jobs finish; enqueue still works; the pause is
   * stored in the database and survives restarts. `pause({})` throws `InvalidPauseTargetError`.
   */
  pause(target: PauseTarget): Promise<void> {
    return this.pauses.pause(target);
  }

  /** Lifts a pause; workers claim the type's or group's jobs again. Resuming what is not paused changes nothing. */
  resume(target: PauseTarget): Promise<void> {
    return this.pauses.resume(target);
  }

  /** What is paused now, cluster-wide: every entry (for thousands of paused groups, page with `findPaused`). */
  listPaused(): Promise<Array<{ type?: string; group?: string }>> {
    return this.pauses.listPaused();
  }

  /**
   * A page of what is paused, groups first, then types, each by name, with when it was paused;
   * `{ kind: 'group' }` for groups only. `limit` 1–500 (default 50), `nextCursor` for the next
   * page, as `find` pages jobs. Bad input: InvalidQueryError, nothing read.
   */
  findPaused(filter?: PausedFilter, options?: FindOptions): Promise<FindPausedResult> {
    return this.pauses.findPaused(filter, options);
  }

  private async read(id: number, executor: SqlExecutor): Promise<JobView | null> {
    assertId(id);
    const { rows } = await executor.run(sql`SELECT ${jobColumns(executor.dialect)} FROM jobs WHERE id = ${id}`);
    return rows.length ? toJobView(toJobRecord(rows[0], executor.dialect)) : null;
  }

  private prepare(nodes: readonly GraphNode[], storeRefs: boolean, checkTypes = true): PreparedGraph {
    assertGraphSize(nodes, this.options);
    const planned = validateGraph(nodes);
    const ctx: NormalizeContext = {
      maxArgsBytes: this.options.maxArgsBytes,
      defaultMaxAttempts: this.options.defaultMaxAttempts,
      defaultTimeoutMs: this.options.defaultTimeoutMs,
      groupWeights: this.options.groupWeights,
      handlerDefaults: (type) => this.registry.get(type)?.options,
    };
    const jobs = nodes.map((node, i) => {
      const job = normalizeJob(node, ctx, storeRefs ? node.ref : undefined);
      if (storeRefs && job.keyMode !== 'forever') {
        throw new InvalidJobError('keyMode', `'forever' in enqueueGraph (the other modes work with enqueue())`, job.keyMode, node.ref);
      }
      if (checkTypes && !planned[i].isContainer) this.assertRunnableType(job.type);
      return job;
    });
    assertUniqueKeys(jobs.map((job, i) => ({ ref: planned[i].ref, key: job.key })));
    return { planned, jobs, storeRefs };
  }

  private assertRunnableType(type: string): void {
    if (!this.options.strictTypes || this.registry.get(type) || this.options.externalTypes.includes(type)) return;
    throw new UnknownJobTypeError(type, this.registry.types());
  }

  /** A keyed job in mode unfinished / debounce / throttle (see insertKeyed). */
  private async writeKeyed(graph: PreparedGraph, options: EnqueueOptions): Promise<number> {
    const step = this.connection.autoIncrementStep;
    const insert = async (tx: SqlExecutor) => {
      const outcome = await insertKeyed(tx, graph, step);
      if (outcome.created && this.options.listenNotify) await notifyInTransaction(tx, 'r');
      return outcome;
    };
    if (options.manager) return (await insert(this.db.executorFor(options.manager)).catch((err) => Promise.reject(keyConflict(err, graph)))).id;
    await this.appTransaction.assertNoOpenAppTransaction();
    // A lost race with a 'forever' enqueue of the same key, or a deadlock: the retry sees the winner.
    let outcome: KeyedOutcome | undefined;
    for (let attempt = 1; !outcome; attempt++) {
      try {
        outcome = await this.db.transaction(insert);
      } catch (err) {
        if (attempt >= 5 || !(isUniqueViolation(err) || isTransientConflict(err))) throw keyConflict(err, graph);
      }
    }
    if (outcome.created) this.events.wake();
    return outcome.id;
  }

  private async write(graph: PreparedGraph, options: EnqueueOptions): Promise<number[]> {
    if (!this.instrumentation) return this.writeGraph(graph, options);
    const trace = this.instrumentation.onEnqueue(
      graph.jobs.map((job, i) => ({ type: job.type, group: job.group, ref: graph.planned[i].ref, container: graph.planned[i].isContainer })),
    );
    if (!trace) return this.writeGraph(graph, options);
    try {
      const ids = await this.writeGraph({ ...graph, carriers: trace.carriers }, options);
      trace.end(ids);
      return ids;
    } catch (err) {
      trace.end(null, err);
      throw err;
    }
  }

  private async writeGraph(graph: PreparedGraph, options: EnqueueOptions): Promise<number[]> {
    const step = this.connection.autoIncrementStep;
    const insert = async (tx: SqlExecutor) => {
      const result = await insertGraph(tx, graph, step);
      if (result.readyCount && this.options.listenNotify) await notifyInTransaction(tx, 'r');
      return result;
    };
    if (options.manager) {
      // The application's transaction owns commit and retry; PostgreSQL delivers our NOTIFY on
      // its commit, other dialects pick the jobs up at the next poll.
      const inserted = await insert(this.db.executorFor(options.manager)).catch((err) => Promise.reject(keyConflict(err, graph)));
      this.reportEnqueued(graph, inserted, options.manager);
      return inserted.ids;
    }
    await this.appTransaction.assertNoOpenAppTransaction();
    const inserted = await withKeyRaceRetry(() => this.db.transaction(insert)).catch((err) => Promise.reject(keyConflict(err, graph)));
    if (inserted.readyCount) this.events.wake();
    this.reportEnqueued(graph, inserted);
    return inserted.ids;
  }

  /** Lifecycle `enqueued` for the new jobs (after the commit; with `manager`, after the app's). */
  private reportEnqueued(graph: PreparedGraph, inserted: InsertedGraph, manager?: EnqueueOptions['manager']): void {
    if (!this.lifecycle.active || !inserted.fresh.length) return;
    const jobs = inserted.fresh.map((i) => ({ id: inserted.ids[i], type: graph.jobs[i].type, group: graph.jobs[i].group }));
    this.lifecycle.enqueued(jobs, manager);
  }
}

function assertId(id: unknown): asserts id is number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new InvalidJobError('id', 'a positive integer', id);
}

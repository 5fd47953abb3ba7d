import { Inject, Injectable, Logger } from '@nestjs/common';
import { JobQueueConnection } from '../database/job-queue.connection';
import { toJobRecord, toJobView } from '../database/job-row';
import { chunked } from '../database/sql';
import { InvalidJobError, JobNotFoundError, WaitForShutdownError, WaitForTimeoutError } from '../errors';
import { JobQueueEvents } from '../events/job-queue.events';
import type { SettledJob } from '../finalize/settled-job';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import type { JobView } from '../job.types';
import { SETTLED_CHANNEL } from '../notify/notify.sql';
import { PgNotifyListener } from '../notify/pg-notify.listener';
import { isTimerMs, MAX_TIMER_MS } from '../options/timer-ms';
import { copyView } from './copy-view';
import { WAITER_CHUNK, WAITER_READ_BYTES } from './id-chunks';
import type { JobWaitersCounters, JobWatchHandlers, WaitForOptions } from './job-waiters.types';
import { forEachPayloadId } from './settled-payload';
import { sliceBySize } from './size-slices';
import { sortByState } from './sort-by-state';
import { WaiterRegistry, type Watch } from './waiter-registry';
import { selectJobRows, selectJobStates, selectRowsWithin, selectSettledAmong } from './waiters.sql';

export type { JobWaitersCounters, JobWatchHandlers, WaitForOptions } from './job-waiters.types';

/** On PostgreSQL with LISTEN up, the poll is a backstop: every 10th interval (10 s by default). */
const BACKSTOP_EVERY = 10;

interface Entry extends Watch, JobWatchHandlers {
  /** Its lookup has answered (a timeout waits for one: a finished job still resolves). */
  looked: boolean;
  /** Its timeout has fired: the next lookup's answer rejects it with the state it reads. */
  expiredAfterMs?: number;
  timer?: NodeJS.Timeout;
}

/**
 * One watcher per process for everything that waits for jobs to finish (`waitFor`, and
 * `watch()` for live views), whatever their number:
 * - every pending watch is in one map by job id;
 * - jobs settled by this process are looked up in that map (the `settled` event);
 * - on PostgreSQL, jobs settled anywhere arrive as notifications (sent by the settling process);
 * - a poll every `pollIntervalMs` asks which pending ids are settled or gone, one statement per
 *   chunk of ids bound as one parameter, answered by no row when nothing changed: the
 *   backstop, and the only path across processes on MySQL and SQLite;
 * - new watches are looked up in batches (all the `waitFor` calls of one tick share a statement),
 *   and so are timed-out ones, so their error carries the state the job is in at that moment;
 * - settled rows are read in full in slices of about WAITER_READ_BYTES, by the sizes read with
 *   their states, so that many large jobs settling together are never one read of them all.
 * At shutdown pending watches fail with `WaitForShutdownError` before the DataSource closes.
 */
@Injectable()
export class JobWaiters {
  private readonly logger = new Logger('JobQueue');
  private readonly registry = new WaiterRegistry<Entry>();
  /** Last state read per pending id (by a lookup; for timeout and shutdown messages). */
  private readonly states = new Map<number, string>();
  private readonly toLookUp = new Set<number>();
  /** Settled ids to read in full, with their size when the poll read it (else a size read comes first). */
  private readonly toFetch = new Map<number, number | undefined>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private flushQueued = false;
  private flushing = false;
  private polling = false;
  private pollAgain = false;
  /** Intervals skipped while LISTEN is up (PostgreSQL). */
  private quietRounds = 0;
  private pollTimer: NodeJS.Timeout | undefined;
  private listening = false;
  private closing = false;
  private closed = false;
  private pollFailing = false;
  private readonly counts = { polls: 0, pollQueries: 0, lookupQueries: 0, fetchQueries: 0, notifications: 0, resolved: 0 };

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly connection: JobQueueConnection,
    private readonly events: JobQueueEvents,
    private readonly listener: PgNotifyListener,
  ) {
    events.on('settled', this.onSettled);
  }

  /** Resolves with the job once it is done, failed or cancelled (see `JobQueueService.waitFor`). */
  wait(id: number, options: WaitForOptions = {}): Promise<JobView> {
    assertId(id);
    const timeoutMs = options.timeoutMs;
    // A timer of more than 2^31 - 1 ms fires at once: a 30-day wait rejected after 1 ms.
    if (timeoutMs !== undefined && !isTimerMs(timeoutMs)) {
      throw new InvalidJobError('timeoutMs', `an integer from 0 to ${MAX_TIMER_MS} (ms)`, timeoutMs);
    }
    return new Promise((resolve, reject) => {
      const entry = this.add(id, { settled: resolve, failed: reject });
      if (entry && timeoutMs !== undefined) entry.timer = setTimeout(() => this.expire(entry, timeoutMs), timeoutMs);
    });
  }

  /**
   * Calls `handlers.settled` once the job is done, failed or cancelled, through the same shared
   * poll, lookup and notifications as `waitFor` (for live views that follow many jobs without a
   * query per job). Returns the function that ends the watch early.
   */
  watch(id: number, handlers: JobWatchHandlers): () => void {
    assertId(id);
    const entry = this.add(id, handlers);
    return () => {
      if (entry && this.registry.remove(entry)) this.afterRemoval(entry.id);
    };
  }

  counters(): JobWaitersCounters {
    return { pending: this.registry.size, pendingIds: this.registry.idCount, ...this.counts };
  }

  /**
   * Stops watching: what is in flight finishes (it may still resolve waiters), then every
   * pending watch fails with `WaitForShutdownError`. Called before the DataSource closes.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true; // no new watches, no more polls
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    if (this.listening) await this.listener.stop();
    // Jobs settled in the shutdown drain are still read and resolved, for up to shutdownGraceMs;
    // then nothing runs. Unbounded, a database that stopped answering held a poll, and
    // app.close() with it, until it answered again.
    const deadline = Date.now() + this.options.shutdownGraceMs;
    while ((this.flushQueued || this.inFlight.size) && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise((r) => (timer = setTimeout(r, deadline - Date.now())));
      await Promise.race([Promise.allSettled([...this.inFlight]), late]);
      clearTimeout(timer);
      if (this.flushQueued) await new Promise((r) => setImmediate(r));
    }
    this.closed = true;
    this.events.off('settled', this.onSettled);
    for (const entry of this.registry.clear()) {
      clearTimeout(entry.timer);
      entry.failed(new WaitForShutdownError(entry.id, this.states.get(entry.id) ?? null));
    }
    this.states.clear();
  }

  private add(id: number, handlers: JobWatchHandlers): Entry | undefined {
    if (this.closing) {
      handlers.failed(new WaitForShutdownError(id, null));
      return undefined;
    }
    const entry: Entry = { id, looked: false, settled: handlers.settled, failed: handlers.failed };
    this.registry.add(entry);
    this.toLookUp.add(id);
    this.scheduleFlush();
    this.pollTimer ??= setInterval(() => this.track(this.poll()), this.options.pollIntervalMs);
    if (!this.listening && this.options.dialect === 'postgres' && this.options.listenNotify) {
      this.listening = true;
      const catchUp = () => this.track(this.poll(true)); // whatever settled before LISTEN (re)started
      this.track(
        this.listener
          .listen(this.connection.dataSource, SETTLED_CHANNEL, this.onNotification, catchUp)
          .then(catchUp, (err) => this.logger.warn(`LISTEN for settled jobs failed (${(err as Error).message}); waitFor polls`)),
      );
    }
    return entry;
  }

  private readonly onSettled = (jobs: SettledJob[]): void => {
    let any = false;
    for (const job of jobs) {
      if (this.registry.has(job.id)) {
        if (!this.toFetch.has(job.id)) this.toFetch.set(job.id, undefined);
        any = true;
      }
    }
    if (any) this.scheduleFlush();
  };

  /** Payload: comma-separated ids of jobs a committed statement left done, failed or cancelled. */
  private readonly onNotification = (payload: string): void => {
    this.counts.notifications++;
    let any = false;
    forEachPayloadId(payload, (id) => {
      if (this.registry.has(id)) {
        if (!this.toFetch.has(id)) this.toFetch.set(id, undefined);
        any = true;
      }
    });
    if (any) this.scheduleFlush();
  };

  /**
   * The timeout fired. A lookup decides (the pending first one, or a new one batched with the
   * others of this tick): a finished job still resolves, an open one rejects with the state read
   * then (the poll reads no open states). While closing, nothing is read: the last state is used.
   */
  private expire(entry: Entry, timeoutMs: number): void {
    entry.expiredAfterMs = timeoutMs;
    if (this.closing) return this.timeOut(entry);
    if (!entry.looked) return;
    entry.looked = false;
    this.toLookUp.add(entry.id);
    this.scheduleFlush();
  }

  private timeOut(entry: Entry): void {
    if (!this.registry.remove(entry)) return;
    clearTimeout(entry.timer);
    entry.failed(new WaitForTimeoutError(entry.id, entry.expiredAfterMs ?? 0, this.states.get(entry.id) ?? 'unknown'));
    this.afterRemoval(entry.id);
  }

  /**
   * A lookup failed: new watches hear of it at once (as a single get() would have told them),
   * timed-out ones reject with their timeout and the last state read, the others keep waiting.
   */
  private lookupFailed(id: number, err: Error): void {
    for (const entry of this.registry.get(id)) {
      if (entry.expiredAfterMs !== undefined) this.timeOut(entry);
      else if (!entry.looked && this.registry.remove(entry)) {
        clearTimeout(entry.timer);
        entry.failed(err);
        this.afterRemoval(id);
      }
    }
  }

  private afterRemoval(id: number): void {
    if (!this.registry.has(id)) this.states.delete(id);
    if (!this.registry.size && this.pollTimer) {
      clearInterval(this.pollTimer);
      this.pollTimer = undefined;
    }
  }

  private scheduleFlush(): void {
    if (this.flushQueued || this.closed) return;
    this.flushQueued = true;
    // setImmediate: every waitFor of this tick, and every settled job of this batch, share a statement.
    setImmediate(() => {
      this.flushQueued = false;
      this.track(this.flush());
    });
  }

  /** Runs the queued lookups and fetches; one loop at a time picks up whatever arrives meanwhile. */
  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (!this.closed && (this.toLookUp.size || this.toFetch.size)) {
        const lookups = [...this.toLookUp].filter((id) => this.registry.has(id));
        /** Settled ids to read in full, by their size. */
        const fetches = new Map<number, number>();
        const unsized = new Set<number>();
        for (const [id, bytes] of this.toFetch) {
          if (!this.registry.has(id)) continue;
          if (bytes === undefined) unsized.add(id);
          else fetches.set(id, bytes);
        }
        this.toLookUp.clear();
        this.toFetch.clear();
        for (const ids of chunked(lookups, WAITER_CHUNK)) {
          try {
            this.counts.lookupQueries++;
            for (const { id, bytes } of await this.readStates(ids)) fetches.set(id, bytes);
          } catch (err) {
            for (const id of ids) if (!fetches.has(id) && !unsized.has(id)) this.lookupFailed(id, err as Error);
          }
        }
        for (const ids of chunked([...unsized], WAITER_CHUNK)) {
          try {
            this.counts.fetchQueries++;
            for (const { id, bytes } of await this.resolveWithin(ids)) fetches.set(id, bytes);
          } catch (err) {
            this.fetchFailed(ids.length, err as Error);
          }
        }
        // Not those resolved meanwhile (an id both looked up and heard of, read whole by resolveWithin).
        const sized = [...fetches].filter(([id]) => this.registry.has(id)).map(([id, bytes]) => ({ id, bytes }));
        fetches.clear();
        for (const ids of sliceBySize(sized, WAITER_READ_BYTES, WAITER_CHUNK)) {
          try {
            this.counts.fetchQueries++;
            await this.resolveFrom(ids);
          } catch (err) {
            this.fetchFailed(ids.length, err as Error);
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** They stay pending: the next poll finds them again. */
  private fetchFailed(count: number, err: Error): void {
    this.logger.warn(`waitFor: reading ${count} settled job(s) failed (${err.message}); retrying at the next poll`);
  }

  /**
   * One poll round: which pending ids are settled or gone, a statement per chunk; settled ones
   * are read and resolved, the waiters of deleted jobs fail. On PostgreSQL, while LISTEN is up, notifications bring every settled job and
   * the round runs only every BACKSTOP_EVERY-th interval (for jobs deleted while waited for, and
   * anything unforeseen); `force` runs it now, after LISTEN (re)starts.
   */
  private async poll(force = false): Promise<void> {
    if (this.closing || !this.registry.idCount) return;
    if (this.polling) {
      if (force) this.pollAgain = true;
      return;
    }
    if (!force && this.listener.isListening(SETTLED_CHANNEL) && ++this.quietRounds < BACKSTOP_EVERY) return;
    this.quietRounds = 0;
    this.polling = true;
    this.counts.polls++;
    try {
      for (const ids of chunked(this.registry.ids(), WAITER_CHUNK)) {
        if (this.closing) return;
        this.counts.pollQueries++;
        const { settled, missing } = await selectSettledAmong(this.connection.db, ids);
        for (const id of missing) this.failAll(id, new JobNotFoundError(id));
        let any = false;
        for (const { id, bytes } of settled) {
          if (this.registry.has(id)) {
            this.toFetch.set(id, bytes);
            any = true;
          }
        }
        if (any) this.scheduleFlush();
      }
      if (this.pollFailing) this.logger.log('waitFor polling works again');
      this.pollFailing = false;
    } catch (err) {
      if (!this.pollFailing) this.logger.warn(`waitFor poll failed (${(err as Error).message}); retrying every ${this.options.pollIntervalMs} ms`);
      this.pollFailing = true;
    } finally {
      this.polling = false;
      if (this.pollAgain) {
        this.pollAgain = false;
        this.track(this.poll(true));
      }
    }
  }

  /**
   * Reads the states of `ids`: missing jobs fail their waiters (removed by retention, or never
   * there), open ones are noted, settled ones are returned with their size to be read in full.
   */
  private async readStates(ids: number[]): Promise<Array<{ id: number; bytes: number }>> {
    const { settled, open, missing } = sortByState(ids, await selectJobStates(this.connection.db, ids));
    for (const { id, state } of open) this.noteOpen(id, state);
    for (const id of missing) this.failAll(id, new JobNotFoundError(id));
    return settled.filter((s) => this.registry.has(s.id));
  }

  /** Reads these settled jobs in full (a slice of about WAITER_READ_BYTES) and resolves their waiters. */
  private async resolveFrom(ids: number[]): Promise<void> {
    const dialect = this.connection.db.dialect;
    const rows = await selectJobRows(this.connection.db, ids);
    const { settled, open, missing } = sortByState(ids, rows.map((row) => toJobView(toJobRecord(row, dialect))));
    for (const job of settled) this.settleAll(job);
    for (const job of open) this.noteOpen(job.id, job.state); // retried meanwhile: keep waiting
    for (const id of missing) this.failAll(id, new JobNotFoundError(id));
  }

  /**
   * Jobs heard of as settled (a notification, this process's own finalize), their size unknown:
   * one statement resolves those within an equal share of WAITER_READ_BYTES each (small jobs, all
   * of them) and returns the others with their size, to be read in slices.
   */
  private async resolveWithin(ids: number[]): Promise<Array<{ id: number; bytes: number }>> {
    const dialect = this.connection.db.dialect;
    const { settled, open, missing } = sortByState(ids, await selectRowsWithin(this.connection.db, ids, Math.floor(WAITER_READ_BYTES / ids.length)));
    const larger: Array<{ id: number; bytes: number }> = [];
    for (const job of settled) {
      if (job.row) this.settleAll(toJobView(toJobRecord(job.row, dialect)));
      else if (this.registry.has(job.id)) larger.push({ id: job.id, bytes: job.bytes });
    }
    for (const job of open) this.noteOpen(job.id, job.state); // retried meanwhile: keep waiting
    for (const id of missing) this.failAll(id, new JobNotFoundError(id));
    return larger;
  }

  private noteOpen(id: number, state: string): void {
    const entries = this.registry.get(id);
    if (!entries.length) return;
    this.states.set(id, state);
    for (const entry of entries) {
      entry.looked = true;
      if (entry.expiredAfterMs !== undefined) this.timeOut(entry);
    }
  }

  private settleAll(job: JobView): void {
    const entries = this.registry.take(job.id);
    this.afterRemoval(job.id);
    this.counts.resolved += entries.length;
    // Each caller gets its own object: one of them mutating its view must not change another's.
    entries.forEach((entry, i) => {
      clearTimeout(entry.timer);
      let view: JobView;
      try {
        view = i === 0 ? job : copyView(job);
      } catch (err) {
        // A result nested too deep to copy (RangeError): this waiter fails, the others still settle.
        entry.failed(err as Error);
        return;
      }
      entry.settled(view);
    });
  }

  private failAll(id: number, err: Error): void {
    const entries = this.registry.take(id);
    this.afterRemoval(id);
    for (const entry of entries) {
      clearTimeout(entry.timer);
      entry.failed(err);
    }
  }

  private track(work: Promise<unknown>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }
}

function assertId(id: unknown): asserts id is number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new InvalidJobError('id', 'a positive integer', id);
}

import { Inject, Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { jobColumns, toJobRecord, toJobView } from '../database/job-row';
import { sql } from '../database/sql';
import { InvalidJobStateError, JobNotFoundError, JobStillNeededError } from '../errors/job.errors';
import { InvalidQueryError } from '../errors/query.errors';
import { JobQueueEvents } from '../events/job-queue.events';
import { cancelJobs } from '../finalize/cancel.sql';
import { retryJobs } from '../finalize/retry.sql';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import type { JobState, JobView } from '../job.types';
import { notifyInTransaction } from '../notify/notify.sql';
import { FINISHED_STATES } from '../removal/job-removal.sql';
import { ID_COLUMN } from './find-jobs.sql';
import { narrowsJobs, normalizeFilter, type JobFilter, type NormalizedFilter } from './job-filter';
import { readPage } from './read-page';
import { removeJobs } from './remove-jobs.sql';
import { NOT_STARTED, runJobsNow } from './run-now.sql';
import { normalizeReschedule, type RescheduleInput } from './reschedule-input';
import { rescheduleJobs } from './reschedule.sql';

/** Jobs per transaction: short transactions (a handful of set-based statements), whatever the size of the re-drive. */
export const ADMIN_BATCH = 500;
/** Ids read per keyset page. */
const ADMIN_PAGE = 1_000;

const RETRYABLE: JobState[] = ['cancelled', 'failed'];
const CANCELLABLE: JobState[] = ['leased', 'ready', 'running', 'waiting'];
const REMOVABLE: JobState[] = [...FINISHED_STATES];
const STARTABLE: JobState[] = [...NOT_STARTED];

/**
 * Bulk `retry`, `cancel`, `remove` and `runNow`: the jobs a filter selects, walked newest first by keyset pages
 * of ids, `ADMIN_BATCH` jobs per transaction, each batch as one set through the statements of
 * `retry(id)` / `cancel(id)` (cascades included). Safe while workers run: every job is locked
 * and re-checked inside its transaction, and a job is visited at most once per call, because
 * the walk only moves to lower ids.
 */
@Injectable()
export class JobAdminService {
  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly db: JobQueueDatabase,
    private readonly events: JobQueueEvents,
  ) {}

  /**
   * Retries the failed and cancelled jobs the filter selects; `count` = those still failed or
   * cancelled when their batch reached them (a selected dependent that an earlier batch
   * re-opened along with its upstream is not counted again).
   */
  async retryMany(filter: JobFilter): Promise<{ count: number }> {
    const f = restrictStates(narrowed(filter, 'retryMany', "{ state: 'failed' } retries every failed job"), RETRYABLE);
    if (!f) return { count: 0 };
    return this.walk(f, async (batch) => {
      const outcome = await this.db.transaction(async (tx) => {
        // The batch as one set: its closures are reopened and recounted together.
        const result = await retryJobs(tx, batch);
        const count = result.retried.length;
        if (count && this.options.listenNotify) await notifyInTransaction(tx, 'r');
        return { count, settled: result.settled };
      });
      this.events.settled(outcome.settled);
      if (outcome.count) this.events.wake();
      return outcome.count;
    });
  }

  /** Cancels the unfinished jobs the filter selects; `count` = those still unfinished when their batch reached them (cascades not counted). */
  async cancelMany(filter: JobFilter): Promise<{ count: number }> {
    const f = restrictStates(narrowed(filter, 'cancelMany', "{ state: ['waiting', 'ready'] } cancels everything not yet started"), CANCELLABLE);
    if (!f) return { count: 0 };
    return this.walk(f, async (batch) => {
      const outcome = await this.db.transaction(async (tx) => {
        const result = await cancelJobs(tx, batch);
        if (this.options.listenNotify) for (const running of result.wereRunning) await notifyInTransaction(tx, `c:${running}`);
        return { count: result.cancelled.length, settled: result.settled, wereRunning: result.wereRunning };
      });
      this.events.cancelled(outcome.wereRunning);
      this.events.settled(outcome.settled);
      return outcome.count;
    });
  }

  /**
   * Deletes a finished job, its edges and its key's idle row. Throws JobNotFoundError for an
   * unknown id, InvalidJobStateError for an unfinished job, JobStillNeededError when unfinished
   * work is tied to it; nothing is removed then.
   */
  async remove(id: number): Promise<void> {
    const outcome = await this.db.transaction((tx) => removeJobs(tx, [id]));
    if (outcome.removed.length) return;
    const state = outcome.states.get(id);
    if (state === undefined) throw new JobNotFoundError(id);
    if (outcome.tied.length) throw new JobStillNeededError(id);
    throw new InvalidJobStateError(id, state, 'remove', REMOVABLE);
  }

  /**
   * Deletes the finished jobs the filter selects (with their edges and idle key rows), except
   * those unfinished work is still tied to; `count` = jobs deleted. SQLite: a batch frees at most
   * 8 MB of values per transaction, the rest goes in the next.
   */
  async removeMany(filter: JobFilter): Promise<{ count: number }> {
    const f = restrictStates(narrowed(filter, 'removeMany', "{ state: 'done' } removes every finished job"), REMOVABLE);
    if (!f) return { count: 0 };
    return this.walk(f, async (batch) => {
      let count = 0;
      for (let left = batch; left.length; ) {
        const outcome = await this.db.transaction((tx) => removeJobs(tx, left));
        count += outcome.removed.length;
        left = outcome.deferred;
      }
      return count;
    });
  }

  /**
   * Brings a waiting or ready job's start forward to now (its delay or retry backoff dropped) and
   * wakes the workers; a job already due is returned as it is. JobNotFoundError for an unknown id,
   * InvalidJobStateError once it is claimed or finished.
   */
  async runNow(id: number): Promise<JobView> {
    const outcome = await this.db.transaction(async (tx) => {
      const changed = await runJobsNow(tx, [id]);
      if (changed.length && this.options.listenNotify) await notifyInTransaction(tx, 'r');
      const { rows } = await tx.run(sql`SELECT ${jobColumns(tx.dialect)} FROM jobs WHERE id = ${id}`);
      return { changed: changed.length > 0, job: rows.length ? toJobView(toJobRecord(rows[0], tx.dialect)) : null };
    });
    if (!outcome.job) throw new JobNotFoundError(id);
    if (!STARTABLE.includes(outcome.job.state)) throw new InvalidJobStateError(id, outcome.job.state, 'runNow', STARTABLE);
    if (outcome.changed) this.events.wake();
    return outcome.job;
  }

  /**
   * Sets a waiting or ready job's earliest start and/or priority and wakes the workers.
   * JobNotFoundError for an unknown id, InvalidJobStateError once it is claimed or finished.
   */
  async reschedule(id: number, input: RescheduleInput): Promise<JobView> {
    const change = normalizeReschedule(input);
    const outcome = await this.db.transaction(async (tx) => {
      const changed = await rescheduleJobs(tx, [id], change);
      if (changed.length && this.options.listenNotify) await notifyInTransaction(tx, 'r');
      const { rows } = await tx.run(sql`SELECT ${jobColumns(tx.dialect)} FROM jobs WHERE id = ${id}`);
      return { changed: changed.length > 0, job: rows.length ? toJobView(toJobRecord(rows[0], tx.dialect)) : null };
    });
    if (!outcome.job) throw new JobNotFoundError(id);
    if (!outcome.changed) throw new InvalidJobStateError(id, outcome.job.state, 'reschedule', STARTABLE);
    this.events.wake();
    return outcome.job;
  }

  /** `reschedule` of every waiting or ready job the filter selects; `count` = jobs changed. */
  async rescheduleMany(filter: JobFilter, input: RescheduleInput): Promise<{ count: number }> {
    const change = normalizeReschedule(input);
    const f = restrictStates(narrowed(filter, 'rescheduleMany', "{ state: 'ready' } reschedules every ready job"), STARTABLE);
    if (!f) return { count: 0 };
    return this.walk(f, async (batch) => {
      const count = await this.db.transaction(async (tx) => {
        const changed = await rescheduleJobs(tx, batch, change);
        if (changed.length && this.options.listenNotify) await notifyInTransaction(tx, 'r');
        return changed.length;
      });
      if (count) this.events.wake();
      return count;
    });
  }

  /** `runNow` of every waiting or ready job the filter selects; `count` = jobs whose start moved. */
  async runNowMany(filter: JobFilter): Promise<{ count: number }> {
    const f = restrictStates(narrowed(filter, 'runNowMany', "{ state: 'ready' } brings every delayed job forward"), STARTABLE);
    if (!f) return { count: 0 };
    return this.walk(f, async (batch) => {
      const count = await this.db.transaction(async (tx) => {
        const changed = await runJobsNow(tx, batch);
        if (changed.length && this.options.listenNotify) await notifyInTransaction(tx, 'r');
        return changed.length;
      });
      if (count) this.events.wake();
      return count;
    });
  }

  private async walk(f: NormalizedFilter, run: (batch: number[]) => Promise<number>): Promise<{ count: number }> {
    let count = 0;
    let before: number | null = null;
    do {
      const page = await readPage(this.db, f, before, ADMIN_PAGE, ID_COLUMN);
      const ids = page.rows.map((r) => Number(r.id));
      for (let i = 0; i < ids.length; i += ADMIN_BATCH) {
        // Ascending within a batch: rows are locked in id order, as finalizes lock them.
        count += await run(ids.slice(i, i + ADMIN_BATCH).sort((a, b) => a - b));
      }
      before = page.nextBefore;
    } while (before !== null);
    return { count };
  }
}

/**
 * The filter, normalized, if it has a condition. `retryMany()` or `cancelMany({})` would act on
 * every job in the database: a slip (a filter built from an empty form) rather than an intent,
 * so it is refused; selecting every job takes saying so with a condition.
 */
function narrowed(filter: JobFilter, operation: string, example: string): NormalizedFilter {
  const f = normalizeFilter(filter);
  if (!narrowsJobs(f)) throw new InvalidQueryError('filter', `at least one condition (${operation} acts on every job only when asked to; ${example})`, filter);
  return f;
}

/** The filter narrowed to the states the operation applies to; null when none is left. */
function restrictStates(f: NormalizedFilter, allowed: JobState[]): NormalizedFilter | null {
  const states = (f.states ?? allowed).filter((s) => allowed.includes(s));
  return states.length ? { ...f, states } : null;
}

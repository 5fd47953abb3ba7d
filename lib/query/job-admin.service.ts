import { Inject, Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JobQueueEvents } from '../events/job-queue.events';
import { cancelJob } from '../finalize/cancel.sql';
import { retryJob } from '../finalize/retry.sql';
import type { SettledJob } from '../finalize/settled-job';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import type { JobState } from '../job.types';
import { notifyInTransaction } from '../notify/notify.sql';
import { normalizeFilter, type JobFilter, type NormalizedFilter } from './job-filter';
import { readPage } from './read-page';

/** Jobs per transaction: short transactions, whatever the size of the re-drive. */
export const ADMIN_BATCH = 100;
/** Ids read per keyset page. */
const ADMIN_PAGE = 1_000;

const RETRYABLE: JobState[] = ['cancelled', 'failed'];
const CANCELLABLE: JobState[] = ['leased', 'ready', 'running', 'waiting'];

/**
 * Bulk `retry` and `cancel`: the jobs a filter selects, walked newest first by keyset pages
 * of ids, each job through the same statements as `retry(id)` / `cancel(id)` (cascades
 * included), `ADMIN_BATCH` jobs per transaction. Safe while workers run: every job is locked
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

  /** Retries the failed and cancelled jobs the filter selects; `count` = jobs this call retried. */
  async retryMany(filter: JobFilter = {}): Promise<{ count: number }> {
    const f = restrictStates(normalizeFilter(filter), RETRYABLE);
    if (!f) return { count: 0 };
    return this.walk(f, async (batch) => {
      const outcome = await this.db.transaction(async (tx) => {
        let count = 0;
        const settled: SettledJob[] = [];
        for (const id of batch) {
          const result = await retryJob(tx, id);
          if (!result.reopened.length) continue; // no longer failed/cancelled, e.g. reopened by an earlier one
          count++;
          settled.push(...result.settled);
        }
        if (count && this.options.listenNotify) await notifyInTransaction(tx, 'r');
        return { count, settled };
      });
      this.events.settled(outcome.settled);
      if (outcome.count) this.events.wake();
      return outcome.count;
    });
  }

  /** Cancels the unfinished jobs the filter selects; `count` = jobs this call cancelled (cascades not counted). */
  async cancelMany(filter: JobFilter = {}): Promise<{ count: number }> {
    const f = restrictStates(normalizeFilter(filter), CANCELLABLE);
    if (!f) return { count: 0 };
    return this.walk(f, async (batch) => {
      const outcome = await this.db.transaction(async (tx) => {
        let count = 0;
        const settled: SettledJob[] = [];
        const wereRunning: number[] = [];
        for (const id of batch) {
          const result = await cancelJob(tx, id);
          if (!result.settled.some((s) => s.id === id)) continue; // finished meanwhile, or cancelled by an earlier one
          count++;
          settled.push(...result.settled);
          wereRunning.push(...result.wereRunning);
        }
        if (this.options.listenNotify) for (const running of wereRunning) await notifyInTransaction(tx, `c:${running}`);
        return { count, settled, wereRunning };
      });
      this.events.cancelled(outcome.wereRunning);
      this.events.settled(outcome.settled);
      return outcome.count;
    });
  }

  private async walk(f: NormalizedFilter, run: (batch: number[]) => Promise<number>): Promise<{ count: number }> {
    let count = 0;
    let before: number | null = null;
    do {
      const page = await readPage(this.db, f, before, ADMIN_PAGE, true);
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

/** The filter narrowed to the states the operation applies to; null when none is left. */
function restrictStates(f: NormalizedFilter, allowed: JobState[]): NormalizedFilter | null {
  const states = (f.states ?? allowed).filter((s) => allowed.includes(s));
  return states.length ? { ...f, states } : null;
}

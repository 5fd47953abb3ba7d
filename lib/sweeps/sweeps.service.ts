import { Inject, Injectable, Logger } from '@nestjs/common';
import { isConnectionError, isTransientConflict } from '../database/db-errors';
import { JobQueueDatabase } from '../database/job-queue.database';
import type { SqlExecutor } from '../database/sql-executor';
import { JobQueueEvents } from '../events/job-queue.events';
import { JobLifecycle } from '../events/job-lifecycle';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { notifyInTransaction } from '../notify/notify.sql';
import { writeIsolatingFailures } from '../finalize/isolate-failures';
import { SlicedPromotions } from '../finalize/sliced-promotions';
import { expiredLeaseIds, reclaimExpiredLeases } from './reclaim.sql';
import { firstRetentionLimit, nextRetentionLimit } from './retention-limit';
import { removeFinishedJobs, type RetentionCursor } from './retention.sql';
import { deleteIdleKeyRows, keysWithoutHolder } from '../enqueue/job-keys.sql';
import type { SweepResult, SweepScope } from './sweep-result';
import { failOverdueJobs, overdueJobIds } from './timeout.sql';

type SweepStep = (tx: SqlExecutor, scope: SweepScope) => Promise<SweepResult>;
type SweepCandidates = (tx: SqlExecutor, scope: SweepScope) => Promise<number[]>;

const BATCH = 200;
/** Chunks of `job_queue_keys` the key sweep reads per retention run (each `retention.batchSize` rows). */
const KEY_SWEEP_CHUNKS = 10;

/**
 * Runs the reclaim and timeout sweeps. Both are idempotent and safe to run from every process
 * at once (SKIP LOCKED, guards re-checked in the UPDATE); each run takes batches until none is left.
 */
@Injectable()
export class SweepsService {
  private readonly logger = new Logger('JobQueue');
  private readonly busy = new Set<string>();
  private readonly running = new Set<Promise<unknown>>();
  /** Where the key sweep goes on at the next retention run (null: from the first key). */
  private keyCursor: string | null = null;

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly db: JobQueueDatabase,
    private readonly events: JobQueueEvents,
    private readonly promotions: SlicedPromotions,
    private readonly lifecycle: JobLifecycle,
  ) {}

  reclaim(): Promise<number> {
    // Promotions a crashed (or shut down) process left half done go on from their cursor.
    void this.track(this.promotions.resume());
    return this.track(
      this.sweep(
        'reclaim',
        (tx, scope) => reclaimExpiredLeases(tx, BATCH, scope),
        (tx, scope) => expiredLeaseIds(tx, BATCH, scope),
      ),
    );
  }

  failOverdue(): Promise<number> {
    return this.track(
      this.sweep(
        'timeout',
        (tx, scope) => failOverdueJobs(tx, BATCH, this.options.retryBackoff, scope),
        (tx, scope) => overdueJobIds(tx, BATCH, scope),
      ),
    );
  }

  /**
   * Shutdown: resolves when no sweep is running, before the DataSource closes. A sliced
   * promotion stops after its current slice; its cursor keeps the rest for the next process.
   */
  async idle(): Promise<void> {
    await this.promotions.close();
    await Promise.allSettled([...this.running]);
  }

  private track<T>(run: Promise<T>): Promise<T> {
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
    return run;
  }

  /** Removes (or archives) finished jobs past the retention age, a batch per transaction. */
  retain(): Promise<number> {
    return this.track(this.retainBatches());
  }

  private async retainBatches(): Promise<number> {
    const r = this.options.retention;
    if (!r || this.busy.has('retention')) return 0;
    this.busy.add('retention');
    let total = 0;
    let keyRows = 0;
    try {
      // Each batch goes on after the last one's rows, not over the rows held before them again.
      let after: RetentionCursor | null = null;
      for (let limit = firstRetentionLimit(this.db.dialect.name === 'sqlite', r.batchSize); ; ) {
        const n = await this.db.transaction((tx) => removeFinishedJobs(tx, r.olderThanMs, limit, r.mode === 'archive', after));
        after = n.last ?? after;
        total += n.jobs;
        keyRows += n.keyRows;
        if (!n.more) break;
        limit = nextRetentionLimit(r.batchSize, n.jobs, n.bytes);
        await new Promise((resolve) => setImmediate(resolve)); // let claims and finalizes in between
      }
      if (total) this.logger.log(`retention sweep: ${total} finished job(s) ${r.mode === 'archive' ? 'archived' : 'deleted'}`);
      keyRows += await this.sweepKeyRows(r.batchSize);
      if (keyRows) this.logger.log(`retention sweep: ${keyRows} idle key row(s) deleted`);
    } catch (err) {
      this.logger.warn(`retention sweep failed (${(err as Error).message}); it runs again at its next interval`);
    } finally {
      this.busy.delete('retention');
    }
    return total;
  }

  /**
   * The rest of `job_queue_keys`: rows no job holds and no throttle window needs, whose holder
   * went without taking its row along (see keysWithoutHolder). Reads up to KEY_SWEEP_CHUNKS
   * chunks of `chunk` keys per run, going on where the last run stopped, so a run costs a
   * bounded amount whatever the table's size, and every row is visited in turn.
   */
  private async sweepKeyRows(chunk: number): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < KEY_SWEEP_CHUNKS; i++) {
      const after = this.keyCursor;
      deleted += await this.db.transaction(async (tx) => {
        const { keys, next } = await keysWithoutHolder(tx, after, chunk);
        this.keyCursor = next;
        return deleteIdleKeyRows(tx, keys);
      });
      if (this.keyCursor === null) break; // the end of the table: the next run starts over
    }
    return deleted;
  }

  private async sweep(name: string, step: SweepStep, candidates: SweepCandidates): Promise<number> {
    if (this.busy.has(name)) return 0; // the previous run of this sweep is still going
    this.busy.add(name);
    let total = 0;
    const skip: number[] = []; // rows the database refused during this run
    try {
      for (;;) {
        let count: number;
        try {
          count = this.publish(await this.runStep(step, { skip }));
        } catch (err) {
          if (isConnectionError(err) || isTransientConflict(err)) throw err;
          count = await this.isolate(name, step, candidates, skip, err);
        }
        total += count;
        if (count < BATCH) break;
      }
      if (total) this.logger.log(`${name} sweep: ${total} job(s) moved`);
    } catch (err) {
      this.logger.warn(`${name} sweep failed (${(err as Error).message}); it runs again at its next interval`);
    } finally {
      this.busy.delete(name);
    }
    return total;
  }

  private runStep(step: SweepStep, scope: SweepScope): Promise<SweepResult> {
    return this.db.transaction(async (tx) => {
      const r = await step(tx, scope);
      if ((r.retried.length || r.promoted !== 0) && this.options.listenNotify) await notifyInTransaction(tx, 'r');
      return r;
    });
  }

  /** Tells waiters and idle workers what a committed sweep transaction changed; returns the rows it moved. */
  private publish(result: SweepResult): number {
    this.events.settled(result.settled);
    if (this.lifecycle.active && result.retried.length) this.lifecycle.retrying(result.retried);
    if (result.retried.length || result.promoted !== 0) this.events.wake();
    return result.retried.length + result.settled.length;
  }

  /**
   * The database refused a sweep batch (a trigger, a constraint): halve it until the row at fault
   * is alone, move the others, and leave that row out of the rest of this run, so one row cannot
   * stop the sweep for every row after it. Returns the rows handled, the refused ones included.
   */
  private async isolate(name: string, step: SweepStep, candidates: SweepCandidates, skip: number[], cause: unknown): Promise<number> {
    const ids = await candidates(this.db, { skip });
    if (!ids.length) throw cause;
    this.logger.warn(`${name} sweep: the database refused a batch of ${ids.length} job(s) (${(cause as Error).message}); writing it in halves to find the job at fault`);
    let count = 0;
    const outcome = await writeIsolatingFailures(ids, {
      write: (only) => this.runStep(step, { skip, only }),
      onError: (err) => (isConnectionError(err) || isTransientConflict(err) ? 'give-up' : 'split'),
      onWritten: (_only, result) => (count += this.publish(result)),
    });
    for (const { item, error } of outcome.refused) {
      skip.push(item);
      count++;
      this.logger.error(`${name} sweep: the database refused job ${item} (${(error as Error).message}); left as it is until the next run`);
    }
    if (outcome.abandoned.length) throw outcome.abandoned[0].error;
    return count;
  }
}

import { Inject, Injectable, Logger } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import type { SqlExecutor } from '../database/sql-executor';
import { JobQueueEvents } from '../events/job-queue.events';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { notifyInTransaction } from '../notify/notify.sql';
import { reclaimExpiredLeases } from './reclaim.sql';
import { removeFinishedJobs } from './retention.sql';
import type { SweepResult } from './sweep-result';
import { failOverdueJobs } from './timeout.sql';

const BATCH = 200;

/**
 * Runs the reclaim and timeout sweeps. Both are idempotent and safe to run from every process
 * at once (SKIP LOCKED, guards re-checked in the UPDATE); each run takes batches until none is left.
 */
@Injectable()
export class SweepsService {
  private readonly logger = new Logger('JobQueue');
  private readonly busy = new Set<string>();
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly db: JobQueueDatabase,
    private readonly events: JobQueueEvents,
  ) {}

  reclaim(): Promise<number> {
    return this.track(this.sweep('reclaim', (tx) => reclaimExpiredLeases(tx, BATCH)));
  }

  failOverdue(): Promise<number> {
    return this.track(this.sweep('timeout', (tx) => failOverdueJobs(tx, BATCH, this.options.retryBackoff)));
  }

  /** Resolves when no sweep is running: shutdown waits for this before closing the DataSource. */
  async idle(): Promise<void> {
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
    try {
      for (;;) {
        const n = await this.db.transaction((tx) => removeFinishedJobs(tx, r.olderThanMs, r.batchSize, r.mode === 'archive'));
        total += n;
        if (n < r.batchSize) break;
        await new Promise((resolve) => setImmediate(resolve)); // let claims and finalizes in between
      }
      if (total) this.logger.log(`retention sweep: ${total} finished job(s) ${r.mode === 'archive' ? 'archived' : 'deleted'}`);
    } catch (err) {
      this.logger.warn(`retention sweep failed (${(err as Error).message}); it runs again at its next interval`);
    } finally {
      this.busy.delete('retention');
    }
    return total;
  }

  private async sweep(name: string, step: (tx: SqlExecutor) => Promise<SweepResult>): Promise<number> {
    if (this.busy.has(name)) return 0; // the previous run of this sweep is still going
    this.busy.add(name);
    let total = 0;
    try {
      for (;;) {
        const result = await this.db.transaction(async (tx) => {
          const r = await step(tx);
          if ((r.retried.length || r.promoted !== 0) && this.options.listenNotify) await notifyInTransaction(tx, 'r');
          return r;
        });
        const count = result.retried.length + result.settled.length;
        total += count;
        this.events.settled(result.settled);
        if (result.retried.length || result.promoted !== 0) this.events.wake();
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
}

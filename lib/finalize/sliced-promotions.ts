import { Inject, Injectable, Logger } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JobQueueEvents } from '../events/job-queue.events';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { promoteNextSlice } from './promotion-slices.sql';

/**
 * Runs the promotions a finalize left to cursors (a done job with more dependents than one slice,
 * lib/finalize/promotion-slices.sql.ts), one slice per transaction, yielding between slices so
 * other transactions (this process's claims and finalizes, other processes' BEGIN IMMEDIATE on
 * SQLite) go in between, and the workers start the dependents of the first slices while the rest
 * are counted down. Woken right after such a finalize commits, and by every reclaim sweep, which
 * finishes what a crashed process left. Any process may run any cursor: each slice reads (on
 * PostgreSQL and MySQL: locks) its cursor inside its own transaction.
 */
@Injectable()
export class SlicedPromotions {
  private readonly logger = new Logger('JobQueue');
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly db: JobQueueDatabase,
    private readonly events: JobQueueEvents,
  ) {}

  /** Starts working through the open cursors unless already doing so; resolves when none is left. */
  resume(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.loop().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Shutdown: finishes the slice in flight and leaves the rest to the cursor (another process, or the next start). */
  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        for (;;) {
          const slice = await this.db.transaction((tx) => promoteNextSlice(tx, undefined, this.options.listenNotify));
          if (slice.promoted) this.events.wake();
          if (!slice.found || this.closed) break;
          await new Promise((resolve) => setImmediate(resolve)); // SQLite's write lock is free in between
        }
      } while (this.again && !this.closed);
    } catch (err) {
      this.logger.warn(`sliced promotion failed (${(err as Error).message}); the next reclaim sweep resumes it`);
    }
  }
}

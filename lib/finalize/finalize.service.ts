import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { isConnectionError, isTransientConflict } from '../database/db-errors';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JobQueueEvents } from '../events/job-queue.events';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { notifyInTransaction } from '../notify/notify.sql';
import { cascade } from './cascade.sql';
import { completeJobs, completeWithDependentsPostgres, type Completion } from './complete.sql';
import type { SettledJob } from './settled-job';
import { failAttempts, type FailedAttempt } from './fail.sql';
import { ownedBy } from '../lease/lease-guard.sql';

export type FinalizeResult = 'done' | 'retried' | 'failed' | 'lost';

interface Pending {
  completion?: Completion;
  failure?: FailedAttempt;
  resolve(result: FinalizeResult): void;
}

const MAX_BATCH = 500;

/**
 * Writes attempt outcomes in batches: whatever finished while the previous flush was in
 * flight goes out in one transaction (guarded complete, failed attempts, then the cascade),
 * so commits per second, not jobs per second, bound throughput. Each row is still guarded by
 * its own lease, so batching never finalizes a job twice.
 *
 * If the database is unreachable the batch is kept and retried with backoff: results are not
 * dropped, and a lease that expires meanwhile makes the guard refuse them instead.
 */
@Injectable()
export class FinalizeService {
  private readonly logger = new Logger('JobQueue');
  private queue: Pending[] = [];
  /** The batch being written: still pending, but no longer in `queue`. */
  private writing = 0;
  private flushing: Promise<void> | undefined;
  private outageSince = 0;

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly db: JobQueueDatabase,
    private readonly events: JobQueueEvents,
  ) {}

  complete(id: number, resultJson: string, parentId: number | null): Promise<FinalizeResult> {
    return this.enqueue({ completion: { id, resultJson, parentId } });
  }

  fail(attempt: FailedAttempt): Promise<FinalizeResult> {
    return this.enqueue({ failure: attempt });
  }

  /** Results handed in and not yet written. */
  get pending(): number {
    return this.queue.length + this.writing;
  }

  /** Resolves once everything handed in so far is written (or refused by its guard). */
  async drain(): Promise<void> {
    while (this.flushing || this.queue.length) {
      this.flushing ??= this.flushLoop();
      await this.flushing;
    }
  }

  private enqueue(item: Omit<Pending, 'resolve'>): Promise<FinalizeResult> {
    return new Promise((resolve) => {
      this.queue.push({ ...item, resolve });
      // setImmediate: outcomes of handlers that finish in the same turn share a transaction.
      if (!this.flushing) this.flushing = new Promise((r) => setImmediate(r)).then(() => this.flushLoop());
    });
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH);
        this.writing = batch.length;
        await this.flushBatch(batch);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private async completeInOneStatement(owner: string, completions: Completion[]) {
    const { rows } = await this.db.run(completeWithDependentsPostgres(owner, completions, this.options.listenNotify));
    const refused = new Set<number>();
    let promoted = 0;
    for (const r of rows) {
      if (r.kind === 'refused') refused.add(Number(r.job));
      else if (r.kind === 'promoted') promoted = Number(r.job);
    }
    const done: SettledJob[] = [];
    for (const c of completions) if (!refused.has(c.id)) done.push({ id: c.id, parentId: null, outcome: 'done' });
    return { done, failed: { retried: [] as number[], failed: [] as SettledJob[] }, result: { settled: done, promoted } };
  }

  private async flushBatch(batch: Pending[]): Promise<void> {
    const owner = this.options.workerId;
    const completions = batch.flatMap((p) => (p.completion ? [p.completion] : []));
    const failures = batch.flatMap((p) => (p.failure ? [p.failure] : []));
    // PostgreSQL, nothing but completions of jobs outside containers: one statement.
    const oneStatement = this.db.dialect.name === 'postgres' && !failures.length && completions.every((c) => c.parentId === null);
    for (let attempt = 0; ; attempt++) {
      try {
        const outcome = oneStatement
          ? await this.completeInOneStatement(owner, completions)
          : await this.db.transaction(async (tx) => {
              const done = await completeJobs(tx, owner, completions);
              const failed = await failAttempts(tx, failures, ownedBy(tx.dialect, owner));
              const result = await cascade(tx, [...done, ...failed.failed]);
              if (result.promoted !== 0 && this.options.listenNotify) await notifyInTransaction(tx, 'r');
              return { done, failed, result };
            });
        if (this.outageSince) {
          this.logger.log(`database reachable again after ${Date.now() - this.outageSince} ms; finalize resumed`);
          this.outageSince = 0;
        }
        const status = new Map<number, FinalizeResult>();
        outcome.done.forEach((s) => status.set(s.id, 'done'));
        outcome.failed.retried.forEach((id) => status.set(id, 'retried'));
        outcome.failed.failed.forEach((s) => status.set(s.id, 'failed'));
        // Not pending any more before anyone hears so: a waiter that counts free slots from
        // `pending` must see the batch gone, or it would wait for the next poll.
        this.writing = 0;
        this.events.settled(outcome.result.settled);
        if (outcome.result.promoted !== 0) this.events.wake();
        for (const p of batch) p.resolve(status.get((p.completion ?? p.failure)!.id) ?? 'lost');
        return;
      } catch (err) {
        if (oneStatement && isTransientConflict(err) && attempt < 8) continue; // rerun the whole statement
        if (!isConnectionError(err)) {
          this.logger.error(`finalize of ${batch.length} job(s) failed; their leases will expire and they will run again`, (err as Error).stack);
          this.writing = 0;
          for (const p of batch) p.resolve('lost');
          return;
        }
        if (!this.outageSince) {
          this.outageSince = Date.now();
          this.logger.warn(`database unreachable (${(err as Error).message}); holding ${batch.length} result(s) and retrying`);
        }
        await sleep(Math.min(5_000, 50 * 2 ** Math.min(attempt, 7)));
      }
    }
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ClaimService } from '../claim/claim.service';
import { inClaimOrder, toClaimedJob, type ClaimedJob } from '../claim/claimed-job';
import type { Row } from '../database/sql-executor';
import { isConnectionError, isTransientConflict } from '../database/db-errors';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JobQueueEvents } from '../events/job-queue.events';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { notifyInTransaction } from '../notify/notify.sql';
import { cascade } from './cascade.sql';
import type { FollowUpClaimer } from './follow-up-claim';
import { completeJobs, completedViewsPostgres, completeThenClaimPostgres, completeWithDependentsPostgres, type Completion } from './complete.sql';
import type { JobView } from '../job.types';
import type { SettledJob } from './settled-job';
import { storableErrorText } from './error-text';
import { failAttempts, failInOneStatementPostgres, type FailedAttempt } from './fail.sql';
import { FollowUpFailed } from './follow-up-failed';
import { GuardTurnedDown } from './guard-turned-down';
import { writeIsolatingFailures, type WriteErrorAction } from './isolate-failures';
import { failureForRefused, quoteDbError } from './refusal';
import { snoozeAttempts, type SnoozedAttempt } from './snooze.sql';
import { SlicedPromotions } from './sliced-promotions';
import { takeBatch } from './take-batch';
import { ownedBy } from '../lease/lease-guard.sql';
import { retryDelayMs } from '../scheduler/retry-backoff';

export type FinalizeResult = 'done' | 'retried' | 'failed' | 'snoozed' | 'lost';

interface Pending {
  completion?: Completion;
  failure?: FailedAttempt;
  snooze?: SnoozedAttempt;
  /** The attempt a completion ends (for the backoff if the database refuses its result). */
  attempt?: number;
  /** `view`: the completed job's, when its completion asked for one and the write returned it. */
  resolve(result: FinalizeResult, view?: JobView): void;
}

interface WriteOutcome {
  done: SettledJob[];
  failed: { retried: number[]; failed: SettledJob[] };
  /** Snoozed attempts written (ids). */
  snoozed?: number[];
  result: { settled: SettledJob[]; promoted: number; sliced?: number };
  /** The worker's claim that ended the transaction, after its promotions (see FollowUpClaimer). */
  claimed?: ClaimedJob[];
  /** Views of completed jobs whose completion asked for one (Completion.wantsView). */
  views?: Map<number, JobView>;
}

const MAX_BATCH = 500;
const MIN_BATCH_BYTES = 1024 * 1024;
/** Fresh runs of a one-statement complete or fail after a deadlock (the transactional path retries inside). */
const CONFLICT_RETRIES = 8;

/**
 * Writes attempt outcomes in batches: whatever finished while the previous flush was in
 * flight goes out in one transaction (guarded complete, failed attempts, then the cascade),
 * so commits per second, not jobs per second, bound throughput. Each row is still guarded by
 * its own lease, so batching never finalizes a job twice. A batch is bounded by count and by
 * the bytes of its results (`maxResultBytes`), so its statement fits what the server accepts.
 *
 * If the database is unreachable the batch is kept and retried with backoff: results are not
 * dropped, and a lease that expires meanwhile makes the guard refuse them instead. If the
 * database refuses the batch for another reason (a trigger, a constraint, a server limit), the
 * batch is halved until the job at fault is alone: the others are written in the same pass,
 * and only that job's attempt fails, with the database's message as its `lastError`.
 */
@Injectable()
export class FinalizeService {
  private readonly logger = new Logger('JobQueue');
  private queue: Pending[] = [];
  /** The batch being written: still pending, but no longer in `queue`. */
  private writing = 0;
  private flushing: Promise<void> | undefined;
  private outageSince = 0;
  /** A split of the current batch was logged already (once per batch, not once per half). */
  private splitLogged = false;
  /** The worker whose claim ends each transaction, when it asked for that and the dialect can. */
  private claimer: FollowUpClaimer | undefined;
  /** The write in flight has reached its claim (or failed): it no longer claims for a tick that skips. */
  private claimPassed = true;
  /** Aborted by giveUpUnwritten(). */
  private readonly retrying = new AbortController();

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly db: JobQueueDatabase,
    private readonly events: JobQueueEvents,
    private readonly promotions: SlicedPromotions,
    private readonly claims: ClaimService,
  ) {}

  /**
   * Ends every finalize transaction with `claimer`'s claim, after the promotions: a statement of
   * the transaction on SQLite and MySQL, and on PostgreSQL the last part of the one-statement
   * complete (completeThenClaimPostgres) or of the transaction. Returns whether it will.
   * Undefined detaches.
   */
  claimWith(claimer: FollowUpClaimer | undefined): boolean {
    this.claimer = claimer;
    return claimer !== undefined;
  }

  /**
   * A write is queued, or in flight before its claim, that will end with the worker's claim: a
   * tick now would claim what that claim takes moments later, after the promotion it waits for.
   */
  get claimsNext(): boolean {
    return this.claimer !== undefined && (this.queue.length > 0 || (this.writing > 0 && !this.claimPassed)) && this.followUpWanted(this.claimer);
  }

  /**
   * PostgreSQL: only when the worker knows of no ready work (a chain between links). Its claim
   * is one function call on a connection of its own, which otherwise runs beside the finalize;
   * ending every complete with it serialized the two and cost a quarter of the throughput of
   * independent jobs. SQLite and MySQL: always (their claim is a transaction anyway).
   */
  private followUpWanted(claimer: FollowUpClaimer): boolean {
    return this.db.dialect.name !== 'postgres' || claimer.nothingReady();
  }

  /**
   * Result bytes per batch. On MySQL exactly `maxResultBytes`, which start-up checked against the
   * server's packet limit; elsewhere at least 1 MiB, so a small limit does not shrink batches.
   */
  private get batchBytes(): number {
    const limit = this.options.maxResultBytes;
    return this.db.dialect.name === 'mysql' ? limit : Math.max(limit, MIN_BATCH_BYTES);
  }

  /** `attempt` (1-based) sets the backoff should the database refuse the result. */
  complete(id: number, resultJson: string, parentId: number | null, attempt = 1, carrier?: string | null): Promise<FinalizeResult> {
    return new Promise((resolve) => this.enqueue({ completion: carrier ? { id, resultJson, parentId, carrier } : { id, resultJson, parentId }, attempt, resolve }));
  }

  /**
   * `complete` for a job whose `completed` event needs its view: the write returns it (no read
   * after the commit). `view` is undefined when the job was not completed, or the write could not say.
   */
  completeWithView(
    id: number,
    resultJson: string,
    parentId: number | null,
    attempt = 1,
    carrier?: string | null,
  ): Promise<{ result: FinalizeResult; view?: JobView }> {
    const completion: Completion = carrier ? { id, resultJson, parentId, carrier, wantsView: true } : { id, resultJson, parentId, wantsView: true };
    return new Promise((resolve) => this.enqueue({ completion, attempt, resolve: (result, view) => resolve({ result, view }) }));
  }

  fail(attempt: FailedAttempt): Promise<FinalizeResult> {
    return new Promise((resolve) => this.enqueue({ failure: attempt, resolve }));
  }

  /** A snoozed attempt: `snoozed` once written, `lost` if the lease was gone. */
  snooze(attempt: SnoozedAttempt, attemptNumber: number): Promise<FinalizeResult> {
    return new Promise((resolve) => this.enqueue({ snooze: attempt, attempt: attemptNumber, resolve }));
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

  private enqueue(item: Pending): void {
    if (this.givenUp) return this.giveUp([item], false); // a handler that ended past the deadline
    this.queue.push(item);
    // setImmediate: outcomes of handlers that finish in the same turn share a transaction.
    if (!this.flushing) this.flushing = new Promise((r) => setImmediate(r)).then(() => this.flushLoop());
  }

  private async flushLoop(): Promise<void> {
    try {
      for (let first = true; this.queue.length; first = false) {
        // Between batches, a turn of the event loop: a synchronous driver (SQLite) with a finalize
        // that claims the next jobs would otherwise chain write → run → write in microtasks alone,
        // and timers (heartbeats, lease renewal, shutdown) would wait until the queue ran dry.
        if (!first) await new Promise((r) => setImmediate(r));
        const batch = takeBatch(this.queue, MAX_BATCH, this.batchBytes, bytesOf);
        this.writing = batch.length;
        const parts = this.byKind(batch);
        for (const [i, part] of parts.entries()) {
          if (this.givenUp) {
            this.giveUp(parts.slice(i).flat(), true); // the rest of the batch, in one warning
            break;
          }
          await this.flushBatch(part);
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private async completeInOneStatement(owner: string, completions: Completion[]): Promise<WriteOutcome> {
    const claimer = this.claimer;
    const views = completions.some((c) => c.wantsView);
    // The views' complete returns rows of its own; it keeps its wake-up instead of a claim.
    const request = claimer && !views && this.followUpWanted(claimer) ? claimer.request() : undefined;
    const call = request && this.claims.oneCall(request);
    if (!call) {
      if (request) claimer!.ended(undefined);
      else claimer?.missed();
      const { rows } = await this.db.run(completeWithDependentsPostgres(owner, completions, this.options.listenNotify));
      return this.completedInOneStatement(completions, rows.map((r) => [String(r.kind), r.job]), rows);
    }
    this.claimPassed = false;
    let rows: Row[];
    try {
      ({ rows } = await this.db.run(completeThenClaimPostgres(owner, completions, this.options.listenNotify, call, request!.withTrace === true)));
    } catch (err) {
      this.claimPassed = true;
      claimer!.ended(undefined);
      if (isConnectionError(err)) throw err;
      // The statement fails as a whole, whichever part failed: the completions are written
      // again without the claim (a failing claim must not fail them; a fault of their own fails
      // this statement too and takes the usual path).
      this.logger.warn(`a complete that ended with this worker's claim failed (${quoteDbError(err)}); writing it again without the claim`);
      const { rows: plain } = await this.db.run(completeWithDependentsPostgres(owner, completions, this.options.listenNotify));
      return this.completedInOneStatement(completions, plain.map((r) => [String(r.kind), r.job]), plain);
    }
    this.claimPassed = true;
    const kinds = rows[0].done_kinds as string[];
    const jobs = rows[0].done_jobs as unknown[];
    const outcome = this.completedInOneStatement(completions, kinds.map((k, i) => [k, jobs[i]]));
    outcome.claimed = rows.filter((r) => r.id != null).map(toClaimedJob).sort(inClaimOrder);
    claimer!.ended(outcome.claimed);
    return outcome;
  }

  /** The outcome of a one-statement complete from its (kind, job) rows; `rows`: the views' statement's, for the views. */
  private completedInOneStatement(completions: Completion[], kinds: Array<[string, unknown]>, rows?: Row[]): WriteOutcome {
    const refused = new Set<number>();
    let promoted = 0;
    let sliced = 0;
    for (const [kind, job] of kinds) {
      if (kind === 'refused') refused.add(Number(job));
      else if (kind === 'promoted') promoted = Number(job);
      else if (kind === 'sliced') sliced = Number(job);
    }
    const done: SettledJob[] = [];
    const notified = this.options.listenNotify; // the statement announced them (SettledNotifier skips them)
    for (const c of completions) if (!refused.has(c.id)) done.push({ id: c.id, parentId: null, outcome: 'done', notified });
    const views = rows && completions.some((c) => c.wantsView) ? completedViewsPostgres(rows, completions, this.db.dialect) : undefined;
    return { done, failed: { retried: [] as number[], failed: [] as SettledJob[] }, result: { settled: done, promoted, sliced }, views };
  }

  /** PostgreSQL, nothing but completions of jobs outside containers: one statement. */
  private isOneStatement(items: Pending[]): boolean {
    return this.db.dialect.name === 'postgres' && items.every((p) => p.completion && p.completion.parentId === null);
  }

  /**
   * PostgreSQL: the completions and the failures of a batch as two writes, each one statement
   * (see isOneStatement, isFailuresOnly). Written together they took the transaction: with one
   * job in twenty failing, nearly every batch did, and throughput at prefetch 500 fell to a third.
   * Jobs finalize independently; each write is still all or nothing.
   */
  private byKind(batch: Pending[]): Pending[][] {
    if (this.db.dialect.name !== 'postgres') return [batch];
    const completions = batch.filter((p) => p.completion);
    return completions.length === 0 || completions.length === batch.length ? [batch] : [completions, batch.filter((p) => !p.completion)];
  }

  /** PostgreSQL, nothing but failed attempts: one statement, unless one of them needs the cascade. */
  private isFailuresOnly(items: Pending[]): boolean {
    return this.db.dialect.name === 'postgres' && items.every((p) => p.failure);
  }

  /**
   * `failures` in one call of `job_queue_fail` (see failInOneStatementPostgres), which announces
   * the jobs failed for good itself. Undefined when one needs the cascade: nothing was written.
   */
  private async failInOneStatement(owner: string, failures: FailedAttempt[]): Promise<WriteOutcome | undefined> {
    let rows: Row[];
    try {
      ({ rows } = await this.db.run(failInOneStatementPostgres(owner, failures, this.options.listenNotify)));
    } catch (err) {
      this.claimer?.missed();
      throw err;
    }
    if (rows.some((r) => r.kind === 'cascade')) return undefined;
    const notified = this.options.listenNotify;
    const retried: number[] = [];
    const failed: SettledJob[] = [];
    for (const r of rows) {
      if (r.kind === 'retried') retried.push(Number(r.job));
      else failed.push({ id: Number(r.job), parentId: null, outcome: 'failed', notified });
    }
    this.claimer?.missed();
    return { done: [], failed: { retried, failed }, result: { settled: failed, promoted: 0 } };
  }

  /** One transaction for `items`, all or nothing; it ends with the worker's claim if one is attached. */
  private async write(items: Pending[]): Promise<WriteOutcome> {
    const owner = this.options.workerId;
    const completions = items.flatMap((p) => (p.completion ? [p.completion] : []));
    const failures = items.flatMap((p) => (p.failure ? [p.failure] : []));
    const snoozes = items.flatMap((p) => (p.snooze ? [p.snooze] : []));
    if (this.isOneStatement(items)) return this.completeInOneStatement(owner, completions);
    if (this.isFailuresOnly(items)) {
      const outcome = await this.failInOneStatement(owner, failures);
      if (outcome) return outcome;
    }
    const claimer = this.claimer;
    this.claimPassed = claimer === undefined;
    let asked = false;
    let outcome: WriteOutcome;
    const transaction = (countGuard: boolean, claiming: boolean) =>
      this.db.transaction(async (tx) => {
        // A fresh map per attempt of the transaction: a retried one must not keep a rolled-back view.
        const views = completions.some((c) => c.wantsView) ? new Map<number, JobView>() : undefined;
        const done = await completeJobs(tx, owner, completions, views, countGuard);
        const failed = await failAttempts(tx, failures, ownedBy(tx.dialect, owner));
        const snoozed = snoozes.length ? await snoozeAttempts(tx, snoozes, ownedBy(tx.dialect, owner)) : undefined;
        const result = await cascade(tx, [...done, ...failed.failed]);
        if (result.promoted !== 0 && this.options.listenNotify) await notifyInTransaction(tx, 'r');
        if (!claimer || !claiming) return { done, failed, snoozed, result, views };
        // Last, after the promotions: the claim sees every job this transaction made ready.
        this.claimPassed = true;
        const request = this.followUpWanted(claimer) ? claimer.request() : undefined;
        if (!request) return { done, failed, snoozed, result, views };
        asked = true;
        try {
          // MySQL reads the ready rows' floors first unless this transaction wrote ready rows itself.
          const wroteReady = result.promoted !== 0 || failed.retried.length > 0 || (snoozed?.length ?? 0) > 0;
          return { done, failed, snoozed, result, claimed: await this.claims.claimWithin(tx, request, !wroteReady), views };
        } catch (err) {
          throw new FollowUpFailed(err);
        }
      });
    // A failed claim rolls the transaction back; the batch is written again without it.
    const withClaim = (countGuard: boolean) =>
      transaction(countGuard, true).catch((err: unknown) => {
        if (!(err instanceof FollowUpFailed)) throw err;
        this.logger.warn(`the claim after a finalize failed (${quoteDbError(err.failure)}); the worker claims again on its own`);
        return transaction(countGuard, false);
      });
    try {
      // The complete guards by count first (see completeJobs); a batch with a lost lease among
      // it is rolled back before its claim and written again with the locking read.
      outcome = await withClaim(true).catch((err: unknown) => {
        if (err instanceof GuardTurnedDown) return withClaim(false);
        throw err;
      });
    } catch (err) {
      this.claimPassed = true;
      if (asked) claimer!.ended(undefined);
      else claimer?.missed();
      throw err;
    }
    if (asked) claimer!.ended(outcome.claimed);
    else claimer?.missed();
    return outcome;
  }

  /**
   * The shutdown could wait no longer (see ShutdownDeadline): results not yet written are given up
   * now, and from now on nothing is held or retried. Their jobs' leases expire and they run again.
   */
  giveUpUnwritten(): void {
    this.retrying.abort();
    // Nor is a batch started any more: it would open a connection the shutdown is closing, or
    // fail on the closed pool, after app.close() returned.
    this.giveUp(this.queue.splice(0), false);
  }

  private get givenUp(): boolean {
    return this.retrying.signal.aborted;
  }

  /**
   * Results the shutdown could wait no longer for: what the deadline's warning announced, one
   * line, not a failed write's error and stack.
   */
  private giveUp(items: Pending[], wereWriting: boolean): void {
    if (!items.length) return;
    if (wereWriting) this.lose(items);
    else for (const p of items) p.resolve('lost');
    this.logger.warn(`shutdown: ${items.length} result(s) not written; their leases will expire and the jobs will run again`);
  }

  private async onWriteError(err: unknown, items: Pending[], attempt: number): Promise<WriteErrorAction> {
    // Past the shutdown's deadline the pool is being closed under the write: whatever the error
    // ("Pool is closed.", a reset socket), nothing is refused by the database; no halving.
    if (this.retrying.signal.aborted) return 'give-up';
    if (isConnectionError(err)) {
      if (!this.outageSince) {
        this.outageSince = Date.now();
        this.logger.warn(`database unreachable (${(err as Error).message}); holding ${items.length} result(s) and retrying`);
      }
      await sleep(Math.min(5_000, 50 * 2 ** Math.min(attempt, 7)), undefined, { signal: this.retrying.signal }).catch(() => undefined);
      return this.retrying.signal.aborted ? 'give-up' : 'retry';
    }
    // Lock conflicts keep the path they always had: rerun, then give up to the lease expiry.
    if (isTransientConflict(err)) return (this.isOneStatement(items) || this.isFailuresOnly(items)) && attempt < CONFLICT_RETRIES ? 'retry' : 'give-up';
    if (items.length > 1 && !this.splitLogged) {
      this.splitLogged = true;
      this.logger.warn(`the database refused a finalize of ${items.length} job(s) (${quoteDbError(err)}); writing it in halves to find the job at fault`);
    }
    return 'split';
  }

  /** Written: not pending any more, and everyone hears so. */
  private settle(items: Pending[], outcome: WriteOutcome): void {
    if (this.outageSince) {
      this.logger.log(`database reachable again after ${Date.now() - this.outageSince} ms; finalize resumed`);
      this.outageSince = 0;
    }
    const status = new Map<number, FinalizeResult>();
    outcome.done.forEach((s) => status.set(s.id, 'done'));
    outcome.failed.retried.forEach((id) => status.set(id, 'retried'));
    outcome.failed.failed.forEach((s) => status.set(s.id, 'failed'));
    outcome.snoozed?.forEach((id) => status.set(id, 'snoozed'));
    // Not pending any more before anyone hears so: a waiter that counts free slots from
    // `pending` must see the batch gone, or it would wait for the next poll.
    this.writing = Math.max(0, this.writing - items.length);
    for (const s of outcome.done) s.ownAttempt = true;
    for (const s of outcome.failed.failed) s.ownAttempt = true;
    this.events.settled(outcome.result.settled);
    // A claim that ended the transaction came after the promotions: it was the wake's claim.
    if (outcome.result.promoted !== 0 && !outcome.claimed) this.events.wake();
    if (outcome.result.sliced) void this.promotions.resume(); // the rest of a huge promotion, a slice per transaction
    for (const p of items) {
      const id = idOf(p);
      const result = status.get(id) ?? 'lost';
      p.resolve(result, result === 'done' ? outcome.views?.get(id) : undefined);
    }
  }

  private lose(items: Pending[]): void {
    this.writing = Math.max(0, this.writing - items.length);
    for (const p of items) p.resolve('lost');
  }

  private async flushBatch(batch: Pending[]): Promise<void> {
    const writer = {
      write: (items: Pending[]) => this.write(items),
      onError: (err: unknown, items: Pending[], attempt: number) => this.onWriteError(err, items, attempt),
      onWritten: (items: Pending[], outcome: WriteOutcome) => this.settle(items, outcome),
    };
    this.splitLogged = false;
    const first = await writeIsolatingFailures(batch, writer);
    for (const { items, error } of first.abandoned) this.abandon(items, error);
    if (!first.refused.length) return;
    // Past the deadline, a refusal is most likely the closing pool's; nothing more is written.
    if (this.givenUp) return this.giveUp(first.refused.map((r) => r.item), true);

    // A job the database refused alone: a failed attempt is written instead (see failureForRefused).
    const replacements = first.refused.map(({ item, error }): Pending => {
      const what = item.completion
        ? 'its result; the attempt fails'
        : item.snooze
          ? 'its snooze; the attempt fails'
          : 'the record of its failed attempt; recording it without the error text';
      this.logger.error(`job ${idOf(item)}: the database refused ${what} (${quoteDbError(error)})`);
      const delay = retryDelayMs(item.attempt ?? 1, this.options.retryBackoff);
      return { failure: failureForRefused(item, error, delay), resolve: item.resolve };
    });
    const second = await writeIsolatingFailures(replacements, writer);
    for (const { items, error } of second.abandoned) this.abandon(items, error);
    if (this.givenUp) return this.giveUp(second.refused.map((r) => r.item), true);
    for (const { item, error } of second.refused) {
      this.logger.error(
        `job ${idOf(item)}: the database refused even recording the failed attempt (${quoteDbError(error)}); its lease will expire and the reclaim sweep will take it`,
      );
      this.lose([item]);
    }
  }

  private abandon(items: Pending[], err: unknown): void {
    if (this.givenUp) return this.giveUp(items, true);
    this.logger.error(`finalize of ${items.length} job(s) failed; their leases will expire and they will run again`, (err as Error).stack);
    this.lose(items);
  }
}

function idOf(p: Pick<Pending, 'completion' | 'failure' | 'snooze'>): number {
  return (p.completion ?? p.failure ?? p.snooze)!.id;
}

/** What a pending outcome adds to its batch's statement. */
function bytesOf(p: Pending): number {
  if (p.completion) return Buffer.byteLength(p.completion.resultJson, 'utf8') + (p.completion.carrier?.length ?? 0);
  if (p.snooze) return 0;
  return Buffer.byteLength(storableErrorText(p.failure!.error), 'utf8');
}


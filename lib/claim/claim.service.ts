import { Injectable } from '@nestjs/common';
import { isSqliteBusy } from '../database/db-errors';
import { JobQueueDatabase } from '../database/job-queue.database';
import type { SqlExecutor } from '../database/sql-executor';
import { selectClaimCandidates } from './claim-candidates.sql';
import { reachesPausedGroup, type ClaimRequest } from './claim-request';
import { inClaimOrder, toClaimedJob, type ClaimedJob } from './claimed-job';
import { leaseJobs } from './lease-jobs.sql';
import { capsApply, claimUnderLimits } from './limited.claim';
import { RateForecast } from './rate-forecast';
import { rateLimitsApply } from './rate-gate';
import { postgresClaimArgs, postgresClaimInTransaction, postgresClaimStatement, type PostgresClaimArgs } from './postgres.claim';
import { claimRotation } from './rotation.claim';
import { claimSqlite } from './sqlite.claim';

/** After SQLite's write lock was busy, a rate-limited claim tries again this soon. */
const BUSY_RETRY_MS = 20;

/**
 * Atomically leases ready jobs: one transaction, one branch per dialect. Every claimed row is
 * written with this owner, a lease deadline and one more attempt; the rows come back ordered
 * by priority (highest first), then due time, then id.
 *
 * Without limits PostgreSQL claims with one function call (no explicit transaction; the
 * rotation claim, used when there are more ready groups than slots, is a second function) and SQLite
 * with one statement per quota inside BEGIN IMMEDIATE. With limits (cluster-wide
 * caps, rate limits, or this process's per-type room) every dialect takes the same careful path:
 * lock the caps' rows and count what is in flight, lock the rate windows and read what they
 * allow, lock candidates of the types and groups with room left, keep those that fit, lease
 * them, record them in their windows. Without `rateLimits` configured none of this runs.
 */
@Injectable()
export class ClaimService {
  /** Groups whose rate window this process last saw full: their turns in the rotation are passed over until it reopens. */
  private readonly rateForecast = new RateForecast();

  constructor(private readonly db: JobQueueDatabase) {}

  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    if (!request.types.length || (!request.quotas.some((q) => q.limit > 0) && !((request.rotation ?? 0) > 0))) return [];
    const byPriority = (rows: ClaimedJob[]) => rows.sort(inClaimOrder);
    const rateLimited = rateLimitsApply(request);
    if (this.inOneCall(request)) {
      // One function call, atomic by itself: no BEGIN/COMMIT round trips.
      const { rows } = await this.db.run(postgresClaimStatement(request)!);
      return byPriority(rows.map(toClaimedJob));
    }
    try {
      return byPriority(await this.db.transaction((tx) => this.claimIn(tx, request, true), { failWhenBusy: true }));
    } catch (err) {
      // Another process holds SQLite's write lock: nothing claimed, the next tick tries again.
      // Rate-limited work has no other wake-up than its window's: try again shortly.
      if (isSqliteBusy(err)) {
        if (rateLimited) request.onRateLimited?.(BUSY_RETRY_MS);
        return [];
      }
      throw err;
    }
  }

  /**
   * The same claim inside a transaction the caller holds (a finalize that ends with this worker's
   * claim, lib/finalize/follow-up-claim.ts). Errors are the caller's; nothing here retries or
   * swallows them. `readFloors` only where the transaction has written no ready row (see
   * selectClaimCandidates).
   */
  async claimWithin(tx: SqlExecutor, request: ClaimRequest, readFloors = false): Promise<ClaimedJob[]> {
    if (!request.types.length || (!request.quotas.some((q) => q.limit > 0) && !((request.rotation ?? 0) > 0))) return [];
    const rows = this.inOneCall(request) ? (await tx.run(postgresClaimInTransaction(request)!)).rows.map(toClaimedJob) : await this.claimIn(tx, request, readFloors);
    return rows.sort(inClaimOrder);
  }

  /**
   * PostgreSQL: the arguments of the claim function call that does this claim alone, for the
   * complete that ends with it (`job_queue_complete_then_claim`, lib/finalize/complete.sql.ts).
   * Null where the claim needs more than the call (limits, rate limits, paused groups it could
   * reach) or asks for nothing. Its rows go through toClaimedJob and inClaimOrder. The call
   * turns `synchronous_commit` off for the transaction (see postgresClaimInTransaction): the
   * function puts it back.
   */
  oneCall(request: ClaimRequest): PostgresClaimArgs | null {
    if (!request.types.length || !this.inOneCall(request)) return null;
    return postgresClaimArgs(request);
  }

  /** The claim functions know nothing of caps, rate windows or per-process room. */
  private inOneCall(request: ClaimRequest): boolean {
    // The rotation function steps over paused groups itself (PostgreSQL migration 28); an
    // any-group quota could reach one, so it is served only when none is paused. Per-group
    // quotas never name one.
    const anyGroupReachesPaused = !request.rotation && reachesPausedGroup(request);
    return (
      this.db.dialect.name === 'postgres' &&
      !capsApply(request) &&
      !request.room &&
      !anyGroupReachesPaused &&
      !rateLimitsApply(request)
    );
  }

  /** `readFloors`: MySQL reads where the ready rows begin first (selectClaimCandidates). */
  private async claimIn(tx: SqlExecutor, request: ClaimRequest, readFloors: boolean): Promise<ClaimedJob[]> {
    if (capsApply(request) || request.room || rateLimitsApply(request)) return claimUnderLimits(tx, request, readFloors, this.rateForecast);
    if (request.rotation) return claimRotation(tx, request, readFloors);
    if (tx.dialect.name === 'sqlite') return claimSqlite(tx, request);
    return leaseJobs(tx, request, await selectClaimCandidates(tx, request, readFloors));
  }
}

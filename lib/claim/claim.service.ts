import { Injectable } from '@nestjs/common';
import { isSqliteBusy } from '../database/db-errors';
import { JobQueueDatabase } from '../database/job-queue.database';
import type { SqlExecutor } from '../database/sql-executor';
import { selectClaimCandidates } from './claim-candidates.sql';
import { reachesPausedGroup, type ClaimRequest } from './claim-request';
import { inClaimOrder, toClaimedJob, type ClaimedJob } from './claimed-job';
import { leaseJobs } from './lease-jobs.sql';
import { limitLockName, roomUnderLimits } from './limit-locks.sql';
import { RateGate, relevantRateKeys } from './rate-gate';
import { postgresClaimArgs, postgresClaimInTransaction, postgresClaimStatement, type PostgresClaimArgs } from './postgres.claim';
import { claimRotation } from './rotation.claim';
import { claimSqlite } from './sqlite.claim';
import { withinLimits, type LimitRoom } from './within-limits';

/** After SQLite's write lock was busy, a rate-limited claim tries again this soon. */
const BUSY_RETRY_MS = 20;

/**
 * Atomically leases ready jobs: one transaction, one branch per dialect. Every claimed row is
 * written with this owner, a lease deadline and one more attempt; the rows come back ordered
 * by priority (highest first), then id.
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
  constructor(private readonly db: JobQueueDatabase) {}

  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    if (!request.types.length || (!request.quotas.some((q) => q.limit > 0) && !((request.rotation ?? 0) > 0))) return [];
    const byPriority = (rows: ClaimedJob[]) => rows.sort(inClaimOrder);
    const rateLimited = !!request.rateLimits && relevantRateKeys(request).length > 0;
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
    const rateLimited = !!request.rateLimits && relevantRateKeys(request).length > 0;
    return this.db.dialect.name === 'postgres' && !relevantLimitLocks(request).length && !request.room && !anyGroupReachesPaused && !rateLimited;
  }

  /** `readFloors`: MySQL reads where the ready rows begin first (selectClaimCandidates). */
  private async claimIn(tx: SqlExecutor, request: ClaimRequest, readFloors: boolean): Promise<ClaimedJob[]> {
    const lockNames = relevantLimitLocks(request);
    const rateKeys = relevantRateKeys(request);
    if (!lockNames.length && !request.room && !rateKeys.length) {
      if (request.rotation) return claimRotation(tx, request, undefined, readFloors);
      if (tx.dialect.name === 'sqlite') return claimSqlite(tx, request);
      return leaseJobs(tx, request, await selectClaimCandidates(tx, request, readFloors));
    }
    // Lock order, the same in every claimer: cap rows, then rate windows, then jobs.
    const cluster = lockNames.length ? await roomUnderLimits(tx, request.limits!, lockNames) : {};
    const gate = rateKeys.length ? await RateGate.open(tx, rateKeys) : undefined;
    const room = tighter(tighter(cluster, request.room ?? {}), gate?.room() ?? {});
    let claimed: ClaimedJob[] = [];
    const without = withoutExhausted(request, room);
    const narrowed = without && gate ? { ...without, admittedAtMs: gate.admittedAtMs } : without;
    if ((room.total ?? 1) > 0 && narrowed) {
      // After the caps' and windows' locks, still no write of this transaction's own.
      if (narrowed.rotation) claimed = await claimRotation(tx, narrowed, room, readFloors);
      else claimed = await leaseJobs(tx, narrowed, withinLimits(await selectClaimCandidates(tx, narrowed, readFloors), room));
    }
    if (gate) {
      const { claimAgainInMs, starts } = await gate.record(tx, claimed);
      for (const job of claimed) {
        const start = starts.get(job.id);
        if (!start) continue;
        if (start.inMs > 0) job.startAt = gate.localAfterMs + start.inMs;
        job.startBy = gate.localBeforeMs + start.byMs;
      }
      if (claimAgainInMs !== undefined) request.onRateLimited?.(claimAgainInMs);
    }
    return claimed;
  }
}

/**
 * The request without the types and groups that have no room left (at a cap or out of rate),
 * so that their ready jobs do not fill the candidate list and crowd out what may run: fair
 * share then applies among what the limits allow. Null when nothing is left to claim.
 */
function withoutExhausted(request: ClaimRequest, room: LimitRoom): ClaimRequest | null {
  const fullTypes = Object.entries(room.types ?? {}).filter(([, n]) => n <= 0).map(([t]) => t);
  const fullGroups = Object.entries(room.groups ?? {}).filter(([, n]) => n <= 0).map(([g]) => g);
  if (!fullTypes.length && !fullGroups.length) return request;
  const types = request.types.filter((t) => !fullTypes.includes(t));
  const quotas = request.quotas.filter((q) => q.group === undefined || !fullGroups.includes(q.group));
  if (!types.length || (!quotas.some((q) => q.limit > 0) && !((request.rotation ?? 0) > 0))) return null;
  return { ...request, types, quotas, fullGroups: fullGroups.length ? fullGroups : undefined };
}

/** The caps this claim could exceed: the global one, capped groups it may take from, capped types it runs. */
function relevantLimitLocks(request: ClaimRequest): string[] {
  const limits = request.limits;
  if (!limits) return [];
  const names: string[] = [];
  if (limits.global) names.push(limitLockName('global'));
  const anyGroup = (request.rotation ?? 0) > 0 || request.quotas.some((q) => q.group === undefined);
  for (const g of Object.keys(limits.groups ?? {})) {
    if (anyGroup || request.quotas.some((q) => q.group === g)) names.push(limitLockName('group', g));
  }
  for (const t of Object.keys(limits.types ?? {})) if (request.types.includes(t)) names.push(limitLockName('type', t));
  return names;
}

function tighter(a: LimitRoom, b: LimitRoom): LimitRoom {
  const pick = (x?: number, y?: number) => (x === undefined ? y : y === undefined ? x : Math.min(x, y));
  const merge = (x: Record<string, number> = {}, y: Record<string, number> = {}) => {
    const out: Record<string, number> = { ...x };
    for (const [k, v] of Object.entries(y)) out[k] = pick(out[k], v)!;
    return out;
  };
  return { total: pick(a.total, b.total), groups: merge(a.groups, b.groups), types: merge(a.types, b.types) };
}

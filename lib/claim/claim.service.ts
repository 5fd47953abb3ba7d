import { Injectable } from '@nestjs/common';
import { isSqliteBusy } from '../database/db-errors';
import { JobQueueDatabase } from '../database/job-queue.database';
import type { SqlExecutor } from '../database/sql-executor';
import { selectClaimCandidates } from './claim-candidates.sql';
import type { ClaimRequest } from './claim-request';
import { toClaimedJob, type ClaimedJob } from './claimed-job';
import { leaseJobs } from './lease-jobs.sql';
import { limitLockName, roomUnderLimits } from './limit-locks.sql';
import { postgresClaimStatement, postgresRotationClaimStatement } from './postgres.claim';
import { claimRotation } from './rotation.claim';
import { claimSqlite } from './sqlite.claim';
import { withinLimits, type LimitRoom } from './within-limits';

/**
 * Atomically leases ready jobs: one transaction, one branch per dialect. Every claimed row is
 * written with this owner, a lease deadline and one more attempt; the rows come back ordered
 * by priority (highest first), then id.
 *
 * Without limits PostgreSQL claims with one function call (no explicit transaction; the
 * rotation claim, used when there are more ready groups than slots, is a second function) and SQLite
 * with one statement per quota inside BEGIN IMMEDIATE. With limits (cluster-wide
 * caps, or this process's per-type room) every dialect takes the same careful path: lock the
 * caps' rows, count what is in flight, lock candidates, keep those that fit, lease them.
 */
@Injectable()
export class ClaimService {
  constructor(private readonly db: JobQueueDatabase) {}

  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    if (!request.types.length || (!request.quotas.some((q) => q.limit > 0) && !((request.rotation ?? 0) > 0))) return [];
    const byPriority = (rows: ClaimedJob[]) => rows.sort((a, b) => b.priority - a.priority || a.id - b.id);
    // The claim functions know nothing of paused groups: they serve a claim that could reach one
    // (an any-group quota, or the rotation) only when none is paused; per-group quotas never name one.
    const pausedReachable =
      !!request.excludeGroups?.length && ((request.rotation ?? 0) > 0 || request.quotas.some((q) => q.group === undefined && q.limit > 0));
    if (this.db.dialect.name === 'postgres' && !relevantLimitLocks(request).length && !request.room && !pausedReachable) {
      // One function call, atomic by itself: no BEGIN/COMMIT round trips.
      const statement = request.rotation ? postgresRotationClaimStatement(request) : postgresClaimStatement(request)!;
      const { rows } = await this.db.run(statement);
      return byPriority(rows.map(toClaimedJob));
    }
    try {
      return byPriority(await this.db.transaction((tx) => this.claimIn(tx, request), { failWhenBusy: true }));
    } catch (err) {
      // Another process holds SQLite's write lock: nothing claimed, the next tick tries again.
      if (isSqliteBusy(err)) return [];
      throw err;
    }
  }

  private async claimIn(tx: SqlExecutor, request: ClaimRequest): Promise<ClaimedJob[]> {
    const lockNames = relevantLimitLocks(request);
    if (!lockNames.length && !request.room) {
      if (request.rotation) return claimRotation(tx, request);
      if (tx.dialect.name === 'sqlite') return claimSqlite(tx, request);
      return leaseJobs(tx, request, await selectClaimCandidates(tx, request));
    }
    const cluster = lockNames.length ? await roomUnderLimits(tx, request.limits!, lockNames) : {};
    const room = tighter(cluster, request.room ?? {});
    if ((room.total ?? 1) <= 0) return [];
    if (request.rotation) return claimRotation(tx, request, room);
    const candidates = await selectClaimCandidates(tx, request);
    return leaseJobs(tx, request, withinLimits(candidates, room));
  }
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

import type { SqlExecutor } from '../database/sql-executor';
import type { RateLimit } from '../job-queue.options';
import { lockRateWindows, rateLimitName, saveRateWindow } from '../rate-limit/rate-limit.sql';
import { currentCounts, rateGeometry, rateRoom, recordClaims, reopensInMs, type RateWindowState } from '../rate-limit/rate-window';
import type { ClaimRequest } from './claim-request';
import type { LimitRoom } from './within-limits';

interface RateKey {
  name: string;
  kind: 'type' | 'group';
  key: string;
  rule: RateLimit;
}

/** The rate limits this claim could exceed: limited types it runs, limited groups it may take from. */
export function relevantRateKeys(request: ClaimRequest): RateKey[] {
  const rates = request.rateLimits;
  if (!rates) return [];
  const keys: RateKey[] = [];
  for (const [t, rule] of Object.entries(rates.types ?? {})) {
    if (request.types.includes(t)) keys.push({ name: rateLimitName('type', t), kind: 'type', key: t, rule });
  }
  const anyGroup = (request.rotation ?? 0) > 0 || request.quotas.some((q) => q.group === undefined);
  for (const [g, rule] of Object.entries(rates.groups ?? {})) {
    if (anyGroup || request.quotas.some((q) => q.group === g)) keys.push({ name: rateLimitName('group', g), kind: 'group', key: g, rule });
  }
  return keys;
}

/** Start allowance of a claim whose caller has no measure of its own yet. */
export const DEFAULT_START_ALLOWANCE_MS = 60;

/**
 * The rate windows of one claim, locked for its transaction: the room they leave now, and,
 * once the claim has chosen its jobs, the claims recorded and when the next window reopens.
 *
 * Each claim is recorded `startAllowanceMs` after its admission: the latest moment its handlers
 * may start. The caller holds itself to that (`startBy`, on its monotonic clock): a job it
 * cannot start by then goes back unstarted. So sliding windows of handler starts, not only of
 * claims, never hold more than the limit; the allowance, not a fixed margin, is what a start
 * costs in window time, and the caller sizes it from the delays it measures.
 */
export class RateGate {
  private constructor(
    private readonly keys: RateKey[],
    private readonly nowMs: number,
    /** `performance.now()` before the admission's clock reading. */
    readonly sentAt: number,
    /** Recorded this far after the admission; handlers must start within it. */
    readonly startAllowanceMs: number,
    private readonly windows: Map<string, RateWindowState>,
  ) {}

  static async open(tx: SqlExecutor, keys: RateKey[], startAllowanceMs = DEFAULT_START_ALLOWANCE_MS): Promise<RateGate> {
    const { nowMs, sentAt, windows } = await lockRateWindows(tx, keys.map((k) => k.name));
    // Never more than the shortest interval: a late start goes back rather than hold a window longer.
    const allowance = Math.max(0, Math.min(startAllowanceMs, ...keys.map((k) => k.rule.intervalMs)));
    return new RateGate(keys, nowMs, sentAt, allowance, windows);
  }

  /** The monotonic time (`performance.now()`) by which this claim's handlers must have started. */
  get startBy(): number {
    return this.sentAt + this.startAllowanceMs;
  }

  /** The database time the windows were read at: the claim's admission. */
  get admittedAtMs(): number {
    return this.nowMs;
  }

  room(): LimitRoom {
    const room: Required<Pick<LimitRoom, 'groups' | 'types'>> = { groups: {}, types: {} };
    for (const k of this.keys) {
      const { counts } = currentCounts(this.state(k), this.nowMs, rateGeometry(k.rule));
      room[k.kind === 'type' ? 'types' : 'groups'][k.key] = rateRoom(k.rule, counts);
    }
    return room;
  }

  /**
   * Records the claimed jobs in their windows and returns the milliseconds from the admission
   * until the soonest exhausted window has room again (undefined if none is exhausted), so the
   * worker can wake then.
   */
  async record(tx: SqlExecutor, claimed: ReadonlyArray<{ type: string; group: string }>): Promise<number | undefined> {
    let wake: number | undefined;
    for (const k of this.keys) {
      const n = claimed.filter((j) => (k.kind === 'type' ? j.type : j.group) === k.key).length;
      const g = rateGeometry(k.rule);
      // +1 ms: starts are compared at millisecond resolution.
      const state = n ? recordClaims(this.state(k), this.nowMs, n, g, this.startAllowanceMs + 1) : this.state(k);
      if (n) await saveRateWindow(tx, k.name, state);
      const reopen = reopensInMs(k.rule, state, this.nowMs, g);
      if (reopen > 0) wake = Math.min(wake ?? Infinity, reopen);
    }
    return wake;
  }

  /** Whether this job counts in one of the claim's windows (only those are held to `startBy`). */
  counts(job: { type: string; group: string }): boolean {
    return this.keys.some((k) => (k.kind === 'type' ? job.type : job.group) === k.key);
  }

  private state(k: RateKey): RateWindowState {
    return this.windows.get(k.name) ?? { head: 0, counts: [] };
  }
}

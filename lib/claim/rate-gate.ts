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

/**
 * The rate windows of one claim, locked for its transaction: the room they leave now, and,
 * once the claim has chosen its jobs, the claims recorded and when the next window reopens.
 */
export class RateGate {
  private constructor(
    private readonly keys: RateKey[],
    private readonly nowMs: number,
    private readonly windows: Map<string, RateWindowState>,
  ) {}

  static async open(tx: SqlExecutor, keys: RateKey[]): Promise<RateGate> {
    const { nowMs, windows } = await lockRateWindows(tx, keys.map((k) => k.name));
    return new RateGate(keys, nowMs, windows);
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
   * Records the claimed jobs in their windows and returns the milliseconds until the soonest
   * exhausted window has room again (undefined if none is exhausted), so the worker can wake then.
   */
  async record(tx: SqlExecutor, claimed: ReadonlyArray<{ type: string; group: string }>): Promise<number | undefined> {
    let wake: number | undefined;
    for (const k of this.keys) {
      const n = claimed.filter((j) => (k.kind === 'type' ? j.type : j.group) === k.key).length;
      const g = rateGeometry(k.rule);
      const state = n ? recordClaims(this.state(k), this.nowMs, n, g) : this.state(k);
      if (n) await saveRateWindow(tx, k.name, state);
      const reopen = reopensInMs(k.rule, state, this.nowMs, g);
      if (reopen > 0) wake = Math.min(wake ?? Infinity, reopen);
    }
    return wake;
  }

  private state(k: RateKey): RateWindowState {
    return this.windows.get(k.name) ?? { head: 0, counts: [] };
  }
}

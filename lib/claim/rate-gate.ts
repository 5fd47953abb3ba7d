import type { SqlExecutor } from '../database/sql-executor';
import type { RateLimit } from '../job-queue.options';
import { hasKeys } from '../options/has-keys';
import { dateStarts, lockRateWindows, rateLimitName, saveRateWindow } from '../rate-limit/rate-limit.sql';
import { admission, claimAgainInMs, lookaheadMs, rateGeometry, recordClaims, startGraceMs, windowAt, type Admission, type RateWindowState } from '../rate-limit/rate-window';
import { takesAnyGroup, type ClaimRequest } from './claim-request';
import type { LimitRoom } from './within-limits';

export interface RateKey {
  name: string;
  kind: 'type' | 'group';
  key: string;
  rule: RateLimit;
}

/** The rate limits of the types this claim runs. */
export function typeRateKeys(request: ClaimRequest): RateKey[] {
  const keys: RateKey[] = [];
  for (const [t, rule] of Object.entries(request.rateLimits?.types ?? {})) {
    if (request.types.includes(t)) keys.push({ name: rateLimitName('type', t), kind: 'type', key: t, rule });
  }
  return keys;
}

/** The rate limits of these groups (those of them that have one). */
export function groupRateKeys(request: ClaimRequest, groups: Iterable<string>): RateKey[] {
  const rates = request.rateLimits?.groups ?? {};
  const keys: RateKey[] = [];
  for (const g of new Set(groups)) if (Object.hasOwn(rates, g)) keys.push({ name: rateLimitName('group', g), kind: 'group', key: g, rule: rates[g] });
  return keys;
}

/** Whether a rate limit could stop this claim: one of its types', or a group's it may take from. */
export function rateLimitsApply(request: ClaimRequest): boolean {
  if (!request.rateLimits) return false;
  if (typeRateKeys(request).length) return true;
  const groups = request.rateLimits.groups ?? {};
  if (!hasKeys(groups)) return false;
  return takesAnyGroup(request) || request.quotas.some((q) => q.group !== undefined && Object.hasOwn(groups, q.group));
}

/** What recording a claim's jobs in their windows decided. */
export interface RateRecord {
  /** Milliseconds until a full window could admit a claim again; undefined if none is full. */
  claimAgainInMs?: number;
  /** The groups whose window is full after this claim, with the milliseconds until it could admit again. */
  fullGroups: Map<string, number>;
  /**
   * Every job a window admitted: milliseconds after the clock reading at which it may start
   * (0 for now), and by which it must have started (the tightest of its windows' grace).
   */
  starts: Map<number, { inMs: number; byMs: number }>;
}

/**
 * The rate windows of one claim, locked for its transaction: the room they leave (now, or at a
 * reopening within their lookahead), and, once the claim has chosen its jobs, the claims
 * recorded at the time each job was admitted.
 */
export class RateGate {
  private readonly admissions = new Map<string, Admission>();

  private constructor(
    private readonly keys: RateKey[],
    private readonly nowMs: number,
    private readonly windows: Map<string, RateWindowState>,
    /**
     * This process's clock just before and just after the database's was read. A job starts no
     * earlier than its admission after the later one, and must have started by its grace after
     * the earlier one: both hold on the database's clock whatever the round trip took.
     */
    readonly localBeforeMs: number,
    readonly localAfterMs: number,
  ) {
    for (const k of keys) this.admissions.set(k.name, admission(k.rule, this.state(k), nowMs, rateGeometry(k.rule), lookaheadMs(k.rule)));
  }

  /**
   * Locks and reads the windows of `keys`; with `prior`, a gate of this transaction, the gate of
   * its keys and these together. Either way the clock is read after the last lock was granted.
   */
  static async open(tx: SqlExecutor, keys: RateKey[], prior?: RateGate): Promise<RateGate> {
    const known = new Set(prior?.keys.map((k) => k.name));
    const more = keys.filter((k) => !known.has(k.name));
    const { nowMs, windows, localBeforeMs, localAfterMs } = await lockRateWindows(tx, more.map((k) => k.name));
    for (const [name, state] of prior?.windows ?? []) windows.set(name, state);
    return new RateGate([...(prior?.keys ?? []), ...more], nowMs, windows, localBeforeMs, localAfterMs);
  }

  /** The database time the windows were read at: the claim's admission, unless a job's window admits it later. */
  get admittedAtMs(): number {
    return this.nowMs;
  }

  room(): LimitRoom {
    const room: Required<Pick<LimitRoom, 'groups' | 'types'>> = { groups: {}, types: {} };
    for (const k of this.keys) room[k.kind === 'type' ? 'types' : 'groups'][k.key] = this.admissions.get(k.name)!.room;
    return room;
  }

  /**
   * Records each claimed job in its windows at its admission, the latest of its windows' (so it
   * starts no earlier than any of them counted it), dates the jobs admitted ahead, and says
   * when the worker should claim again.
   */
  async record(tx: SqlExecutor, claimed: ReadonlyArray<{ id: number; type: string; group: string }>): Promise<RateRecord> {
    const applies = (k: RateKey, job: { type: string; group: string }) => (k.kind === 'type' ? job.type : job.group) === k.key;
    const admittedAt = claimed.map((job) => this.keys.reduce((at, k) => (applies(k, job) ? Math.max(at, this.admissions.get(k.name)!.atMs) : at), this.nowMs));
    const starts = new Map<number, { inMs: number; byMs: number }>();
    const ahead = new Map<number, number[]>();
    claimed.forEach((job, i) => {
      const grace = this.keys.reduce((g, k) => (applies(k, job) ? Math.min(g, startGraceMs(k.rule)) : g), Infinity);
      if (grace === Infinity) return; // no window counts it
      const inMs = admittedAt[i] - this.nowMs;
      starts.set(job.id, { inMs, byMs: inMs + grace });
      if (inMs > 0) {
        const same = ahead.get(admittedAt[i]);
        if (same) same.push(job.id);
        else ahead.set(admittedAt[i], [job.id]);
      }
    });
    for (const [at, ids] of ahead) await dateStarts(tx, ids, at);
    let claimAgainIn: number | undefined;
    const fullGroups = new Map<string, number>();
    for (const k of this.keys) {
      const g = rateGeometry(k.rule);
      // In admission order, so the window's head only moves forward.
      const times = admittedAt.filter((_, i) => applies(k, claimed[i])).sort((a, b) => a - b);
      let state = this.state(k);
      for (let i = 0; i < times.length; ) {
        let j = i;
        while (j < times.length && times[j] === times[i]) j++;
        state = recordClaims(state, times[i], j - i, g);
        i = j;
      }
      if (times.length) await saveRateWindow(tx, k.name, state);
      const again = claimAgainInMs(k.rule, state, this.nowMs, g, lookaheadMs(k.rule));
      if (again !== undefined) claimAgainIn = Math.min(claimAgainIn ?? Infinity, again);
      if (again !== undefined && k.kind === 'group') fullGroups.set(k.key, again);
    }
    return { claimAgainInMs: claimAgainIn, starts, fullGroups };
  }

  /** The stored window as this claim counts it (windowAt: another width, a head far ahead). */
  private state(k: RateKey): RateWindowState {
    const stored = this.windows.get(k.name);
    return stored ? windowAt(stored, this.nowMs, k.rule, rateGeometry(k.rule)) : { head: 0, counts: [] };
  }
}

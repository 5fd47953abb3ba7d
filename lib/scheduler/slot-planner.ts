import type { ClaimQuota } from '../claim/claim-request';
import type { SqlExecutor } from '../database/sql-executor';
import { fairShare, newFairShareState } from './fair-share';
import { readyGroups, type ReadyGroup } from './ready-groups.sql';

/** Group list freshness: long enough to spare a query per tick, short enough that a new group waits little. */
const GROUPS_TTL_MS = 250;

export interface PlanInput {
  /** Slots free now. */
  free: number;
  /** Extra jobs worth prefetching (0 under caps). */
  prefetch: number;
  types: string[];
  inFlightByGroup: ReadonlyMap<string, number>;
  /** Paused groups: given no slots (the claim excludes them too). */
  pausedGroups?: ReadonlySet<string>;
  /** The claim that ends this worker's finalize, right after its promotions (see plan). */
  afterFinalize?: boolean;
}

/** What to claim: per-group or any-group quotas, or slots to fill by the shared rotation. */
export interface ClaimPlan {
  quotas: ClaimQuota[];
  rotation?: number;
}

/**
 * Turns free slots into a claim plan. One group with ready jobs: one quota for it, plus the
 * prefetch. Up to `concurrency` groups: per group by weighted fair share of the slots held,
 * never prefetched (a buffered job would count as held before it runs, so every slot is
 * allocated when it frees). More groups than slots: the claim itself fills the free slots, plus
 * the prefetch, by weighted round-robin from its types' rotation cursor (cluster-wide), so no group
 * waits more than a round however many groups there are, and this process never lists them
 * all. Prefetching there keeps the round-robin order (the buffer starts jobs in claim order)
 * and hides the claim's round trip, without which short jobs ran at about half the rate of one
 * prefetching group (see bench/RESULTS.md, fair-share-scale).
 *
 * The ready groups (at most concurrency + 1 of them, enough to tell the cases apart) are
 * refreshed in the background, so a claim never waits for them: an idle worker woken by a
 * notification claims at once with the groups it last saw.
 */
export class SlotPlanner {
  private groups: { list: ReadyGroup[]; at: number } = { list: [], at: 0 };
  private refreshing: Promise<void> | undefined;
  /** The types and paused groups of the last plan, for the refresh that invalidate() starts. */
  private types: string[] | undefined;
  private paused: ReadonlySet<string> | undefined;
  /** Bumped by invalidate(): a refresh begun before the bump may predate what ran dry. */
  private generation = 0;
  private readonly fair = newFairShareState();
  /**
   * When a read last found no ready group (0: never). Kept apart from `groups.at`, which a short
   * claim resets: an empty list has no group that ran dry, so that reset does not make it wrong.
   */
  private emptyReadAt = 0;

  constructor(
    private readonly db: SqlExecutor,
    private readonly concurrency: number,
    private readonly groupWeights: Record<string, number>,
    /** Called when a group appears that the last list lacked, so the caller re-plans. */
    private readonly onGroupsGrew: () => void,
  ) {}

  plan(input: PlanInput): ClaimPlan {
    this.types = input.types;
    this.paused = input.pausedGroups;
    if (Date.now() - this.groups.at > GROUPS_TTL_MS) this.refresh(input.types);
    const paused = input.pausedGroups;
    // The look steps over paused groups; one paused since is left out here until the next look.
    const list = paused?.size ? this.groups.list.filter((g) => !paused.has(g.group)) : this.groups.list;
    // Every group seen was paused since: nothing to claim until the next look shows another.
    if (!list.length && this.groups.list.length) return { quotas: [] };
    if (list.length === 1) {
      const limit = input.free + input.prefetch;
      if (limit <= 0) return { quotas: [] };
      // With groups paused, name the one group left: a per-group claim never walks a paused group's rows.
      return { quotas: [paused?.size ? { group: list[0].group, limit } : { limit }] };
    }
    // More groups than slots, or none seen yet (an idle worker just woken): the rotation is fair
    // whatever arrived, and never lists the groups. Prefetch only once many groups were seen.
    if (list.length > this.concurrency) {
      const slots = input.free + input.prefetch;
      return slots > 0 ? { quotas: [], rotation: slots } : { quotas: [] };
    }
    if (input.free <= 0) return { quotas: [] };
    // A recent look found no group ready (not: no look yet), and this claim ends a
    // finalize: what is ready now is mostly what that finalize promoted (a chain's next link).
    // The plain claim takes it; the rotation would walk the groups for it and come back short,
    // which walks them once more (invalidate). Nothing was waiting at the last look, so no
    // backlog is passed over; the next look (within GROUPS_TTL_MS) brings the rotation back.
    if (list.length === 0 && input.afterFinalize && this.nothingReady) return { quotas: [{ limit: input.free }] };
    if (list.length === 0) return { quotas: [], rotation: input.free };
    const demand = list.map((g) => ({
      group: g.group,
      weight: Object.hasOwn(this.groupWeights, g.group) ? this.groupWeights[g.group] : g.weight,
      inFlight: input.inFlightByGroup.get(g.group) ?? 0,
    }));
    const quotas = [...fairShare(demand, this.concurrency, input.free, this.fair)].map(([group, limit]) => ({ group, limit }));
    return { quotas };
  }

  /** A recent look found no group with ready work (not: no look yet). */
  get nothingReady(): boolean {
    return !this.groups.list.length && Date.now() - this.emptyReadAt <= 2 * GROUPS_TTL_MS;
  }

  /**
   * A claim came back short, or groups were paused or resumed: look at the groups again now.
   * Nothing else may come to plan again (an idle worker waits for its poll), so the refresh
   * itself re-plans if it finds a newcomer.
   */
  invalidate(pausedGroups?: ReadonlySet<string>): void {
    this.groups.at = 0;
    this.generation++;
    if (pausedGroups) this.paused = pausedGroups;
    if (this.types) this.refresh(this.types);
  }

  /**
   * The first concurrency + 1 groups with claimable work, paused groups stepped over: a list
   * of the first groups in key order, paused ones filtered out afterwards, starved every group
   * after them once concurrency + 1 paused groups held ready jobs.
   */
  private refresh(types: string[]): void {
    if (this.refreshing) return;
    const generation = this.generation;
    this.refreshing = readyGroups(this.db, types, this.concurrency + 1, this.paused)
      .then((list) => {
        const before = this.groups.list;
        // A claim that came back short while this read ran may have seen later work than it did.
        const outdated = generation !== this.generation;
        this.groups = { list, at: outdated ? 0 : Date.now() };
        this.emptyReadAt = list.length ? 0 : Date.now();
        // Any newcomer, not only a first or second group: an idle worker that last saw groups
        // a and b, woken for a job of group c, claims for a and b, gets nothing, and would
        // otherwise wait for its poll.
        if (appeared(before, list)) this.onGroupsGrew();
        return outdated;
      })
      .catch(() => false) // the claim itself reports database trouble
      .then((outdated) => {
        this.refreshing = undefined;
        if (outdated) this.refresh(types);
      });
  }
}

/** True when `after` holds a group that `before` does not. */
export function appeared(before: readonly ReadyGroup[], after: readonly ReadyGroup[]): boolean {
  if (!after.length) return false;
  const seen = new Set(before.map((g) => g.group));
  return after.some((g) => !seen.has(g.group));
}

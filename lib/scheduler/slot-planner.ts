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
}

/**
 * Turns free slots into claim quotas: per group by weighted fair share when several groups
 * have ready jobs, else one any-group quota (the only case where prefetching is worth it:
 * with several groups every slot is allocated when it frees). The ready groups are refreshed
 * in the background, so a claim never waits for them: an idle worker woken by a notification
 * claims at once with the groups it last saw.
 */
export class SlotPlanner {
  private groups: { list: ReadyGroup[]; at: number } = { list: [], at: 0 };
  private refreshing: Promise<void> | undefined;
  private readonly fair = newFairShareState();

  constructor(
    private readonly db: SqlExecutor,
    private readonly concurrency: number,
    private readonly groupWeights: Record<string, number>,
    /** Called when a second group appears, so the caller re-plans by fair share. */
    private readonly onGroupsGrew: () => void,
  ) {}

  plan(input: PlanInput): ClaimQuota[] {
    if (Date.now() - this.groups.at > GROUPS_TTL_MS) this.refresh(input.types);
    const paused = input.pausedGroups;
    const list = paused?.size ? this.groups.list.filter((g) => !paused.has(g.group)) : this.groups.list;
    if (list.length <= 1) {
      const limit = input.free + input.prefetch;
      if (limit <= 0) return [];
      // With groups paused, name the one group left: a per-group claim never walks a paused group's rows.
      if (paused?.size && this.groups.list.length) return list.length ? [{ group: list[0].group, limit }] : [];
      return [{ limit }];
    }
    if (input.free <= 0) return [];
    const demand = list.map((g) => ({
      group: g.group,
      weight: this.groupWeights[g.group] ?? g.weight,
      inFlight: input.inFlightByGroup.get(g.group) ?? 0,
    }));
    return [...fairShare(demand, this.concurrency, input.free, this.fair)].map(([group, limit]) => ({ group, limit }));
  }

  /** A group quota came back short: look at the groups again before the next plan. */
  invalidate(): void {
    this.groups.at = 0;
  }

  private refresh(types: string[]): void {
    if (this.refreshing) return;
    this.refreshing = readyGroups(this.db, types)
      .then((list) => {
        const grew = list.length > 1 && this.groups.list.length <= 1;
        this.groups = { list, at: Date.now() };
        if (grew) this.onGroupsGrew();
      })
      .catch(() => undefined) // the claim itself reports database trouble
      .finally(() => (this.refreshing = undefined));
  }
}

/**
 * The groups whose rate window this process last saw full, each until its window could admit a
 * claim again. A claim that may take any group locks only the windows of the groups its walk
 * reaches (claimUnderLimits), so it cannot know beforehand which of thousands are full; without
 * this, a walk kept offering its slots to full groups (each then refused) and 200 rate-limited
 * tenants with a backlog held 3,000 jobs of unlimited tenants up from 1.8 s to 20 s on SQLite.
 * A forecast only: the windows themselves decide, under their locks, when the walk reaches a
 * group. The clock is this process's, the reopening the database's: a group may come back a
 * little early (its window refuses it again) or late (it waits a little longer), never unfairly.
 */
export class RateForecast {
  private readonly until = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The group's window is full for `inMs` more. */
  full(group: string, inMs: number): void {
    this.until.set(group, this.now() + inMs);
  }

  /** A claim took from the group: its window admitted it, so it is not full any more than that claim says. */
  admitted(group: string): void {
    this.until.delete(group);
  }

  /**
   * The groups still full now, and the milliseconds until the first of them reopens (the worker
   * claims again then, as it does for a window the claim read); the reopened ones are forgotten.
   */
  fullGroups(): { groups: string[]; reopensInMs?: number } {
    const now = this.now();
    const groups: string[] = [];
    let first = Infinity;
    for (const [group, at] of this.until) {
      if (at > now) {
        groups.push(group);
        first = Math.min(first, at);
      } else this.until.delete(group);
    }
    return groups.length ? { groups, reopensInMs: first - now } : { groups };
  }
}

/** A group with ready work, as seen by one process's scheduler. */
export interface GroupDemand {
  group: string;
  weight: number;
  /** This process's jobs of the group currently running. */
  inFlight: number;
}

/** Carried from tick to tick by the caller; makes scarce slots rotate. */
export interface FairShareState {
  credits: Map<string, number>;
  /** Rotates tie-breaks so iteration order never decides who waits. */
  turn: number;
}

export function newFairShareState(): FairShareState {
  return { credits: new Map(), turn: 0 };
}

/**
 * Splits `total` slots in proportion to `weights` by largest remainder, then lifts any entry
 * below `min` by taking from the most over-served one. Requires total >= min * weights.length.
 */
export function largestRemainder(total: number, weights: readonly number[], min = 0): number[] {
  const n = weights.length;
  if (n === 0) return [];
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (total * w) / sum);
  const out = exact.map(Math.floor);
  const left = total - out.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let k = 0; k < left; k++) out[order[k][1]]++;
  for (let i = 0; i < n; i++) {
    while (out[i] < min) {
      let donor = -1;
      for (let j = 0; j < n; j++) {
        if (out[j] > min && (donor < 0 || out[j] / weights[j] > out[donor] / weights[donor])) donor = j;
      }
      if (donor < 0) break; // not enough slots for the minimum everywhere
      out[donor]--;
      out[i]++;
    }
  }
  return out;
}

/**
 * Decides how many of `free` slots each group gets this tick, out of a process `capacity`.
 *
 * Shares are of slots held, not of claims made: each group has a target share of the capacity
 * (weighted largest remainder, at least one slot per present group), and free slots go to the
 * groups furthest below their target. So a 3:1 pair holds 3:1 of the slots whatever their job
 * durations, and a one-job group next to a 10,000-job group gets the next free slot.
 *
 * With more groups than slots, "at least one each" cannot hold: slots rotate by smooth weighted
 * round-robin, whose credits persist in `state`, so every group is served in weight proportion
 * over time and none is starved by iteration order.
 */
export function fairShare(groups: readonly GroupDemand[], capacity: number, free: number, state: FairShareState): Map<string, number> {
  const alloc = new Map<string, number>();
  if (free <= 0 || groups.length === 0) return alloc;
  state.turn++;
  for (const key of state.credits.keys()) {
    if (!groups.some((g) => g.group === key)) state.credits.delete(key);
  }
  const n = groups.length;
  const rotated = groups.map((_, i) => groups[(i + state.turn) % n]);

  if (n <= capacity) {
    const targets = largestRemainder(capacity, rotated.map((g) => g.weight), 1);
    const deficit = rotated.map((g, i) => targets[i] - g.inFlight);
    for (let s = 0; s < free; s++) {
      let best = 0;
      for (let i = 1; i < n; i++) {
        // Largest deficit; ties go to the group furthest below target relative to its weight.
        if (deficit[i] > deficit[best] || (deficit[i] === deficit[best] && deficit[i] / rotated[i].weight > deficit[best] / rotated[best].weight)) best = i;
      }
      deficit[best]--;
      alloc.set(rotated[best].group, (alloc.get(rotated[best].group) ?? 0) + 1);
    }
    return alloc;
  }

  // Scarce: smooth weighted round-robin, one group per slot.
  const total = rotated.reduce((a, g) => a + g.weight, 0);
  for (let s = 0; s < free; s++) {
    let best: GroupDemand | undefined;
    let bestCredit = -Infinity;
    for (const g of rotated) {
      const credit = (state.credits.get(g.group) ?? 0) + g.weight;
      state.credits.set(g.group, credit);
      if (credit > bestCredit && !alloc.has(g.group)) {
        best = g;
        bestCredit = credit;
      }
    }
    state.credits.set(best!.group, bestCredit - total);
    alloc.set(best!.group, 1);
  }
  return alloc;
}

/** One row of a reach statement (see graphReachStatement). */
export interface ReachRow {
  id: number;
  /** The neighbour this row came from; 0 for a seed reached by no known neighbour. */
  prev: number;
  /** Hops from the seeds. */
  depth: number;
  budget: number;
  /** Neighbours of the job, counted up to the budget. */
  deg: number;
}

export interface ReachedLevels {
  /** The levels after the seeds that the rows hold completely, each ordered as one round orders it. */
  levels: number[][];
  /** The last level has no unseen neighbours: the walk is over. */
  ends: boolean;
  /** Of the last level's jobs: the neighbour each was reached from and its count of neighbours. */
  known: Map<number, { prev: number; deg: number }>;
}

/**
 * Which levels a reach statement's rows hold completely, and in which order the walk takes them
 * (pure). A level is complete when every job of the level before was walked on: it had budget
 * for all its neighbours, was not at the depth limit, and nothing cut the recursion after it.
 * Levels stop after one wider than `maxWidth`: one round takes a wide level in slices, and the
 * order of the level after it depends on the slices, so that level is left to the rounds. Jobs
 * in `seen` (walked before, or seeds) are not new, whatever their depth here; a new job's fewest
 * hops from the seeds are its hops from the walk's level of the seeds. In a level, the nearest
 * ids to `root` come first, then the lower id, as in one round of the walk.
 */
export function reachedLevels(rows: readonly ReachRow[], seen: ReadonlySet<number>, root: number, maxWidth: number, maxDepth: number): ReachedLevels {
  const none: ReachedLevels = { levels: [], ends: false, known: new Map() };
  let deepest = 0;
  for (const r of rows) deepest = Math.max(deepest, r.depth);
  // A row with budget left and neighbours besides the one it came from has rows below it, unless
  // the recursion was cut (a server's lower recursion limit): then its level is not complete.
  const walkedOn = (r: ReachRow) => r.deg <= (r.prev ? 1 : 0) || (r.depth < maxDepth && r.depth < deepest && r.budget > r.deg);
  const nearest = new Map<number, { depth: number; walked: boolean; prev: number; deg: number }>();
  let seedsWalked = true;
  let seeds = 0;
  for (const r of rows) {
    if (r.depth === 0) {
      seeds++;
      if (!walkedOn(r)) seedsWalked = false;
      continue;
    }
    if (seen.has(r.id)) continue;
    const n = nearest.get(r.id);
    if (!n || r.depth < n.depth) nearest.set(r.id, { depth: r.depth, walked: walkedOn(r), prev: r.prev, deg: r.deg });
    else if (r.depth === n.depth && !n.walked && walkedOn(r)) nearest.set(r.id, { depth: r.depth, walked: true, prev: r.prev, deg: r.deg });
  }
  if (!seeds || !seedsWalked) return none;
  const byDepth: number[][] = [];
  for (const [id, n] of nearest) (byDepth[n.depth] ??= []).push(id);
  const levels: number[][] = [];
  for (let depth = 1; ; depth++) {
    const level = byDepth[depth];
    if (!level) return { levels, ends: true, known: knownOf(levels, nearest) };
    levels.push(level.sort((a, b) => Math.abs(a - root) - Math.abs(b - root) || a - b));
    if (level.length > maxWidth || !level.every((id) => nearest.get(id)!.walked)) return { levels, ends: false, known: knownOf(levels, nearest) };
  }
}

function knownOf(levels: number[][], nearest: Map<number, { prev: number; deg: number }>): Map<number, { prev: number; deg: number }> {
  const last = levels[levels.length - 1] ?? [];
  return new Map(last.map((id) => [id, { prev: nearest.get(id)!.prev, deg: nearest.get(id)!.deg }]));
}

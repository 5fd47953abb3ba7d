/** Anything waiting for one job id. */
export interface Watch {
  readonly id: number;
}

/**
 * The pending watches of a process by job id: add, remove, and take all of one id in O(1), so
 * a settled job finds its waiters by lookup whatever their number.
 */
export class WaiterRegistry<W extends Watch> {
  private readonly byId = new Map<number, Set<W>>();
  private count = 0;

  /** Watches pending, over all ids. */
  get size(): number {
    return this.count;
  }

  /** Distinct ids with a watch pending. */
  get idCount(): number {
    return this.byId.size;
  }

  add(watch: W): void {
    let set = this.byId.get(watch.id);
    if (!set) this.byId.set(watch.id, (set = new Set()));
    if (!set.has(watch)) {
      set.add(watch);
      this.count++;
    }
  }

  /** True if it was still pending. */
  remove(watch: W): boolean {
    const set = this.byId.get(watch.id);
    if (!set?.delete(watch)) return false;
    this.count--;
    if (!set.size) this.byId.delete(watch.id);
    return true;
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  /** The watches of `id`, without removing them. */
  get(id: number): ReadonlySet<W> | undefined {
    return this.byId.get(id);
  }

  /** Removes and returns every watch of `id`. */
  take(id: number): W[] {
    const set = this.byId.get(id);
    if (!set) return [];
    this.byId.delete(id);
    this.count -= set.size;
    return [...set];
  }

  /** Every id with a watch pending. */
  ids(): number[] {
    return [...this.byId.keys()];
  }

  /** Removes and returns everything. */
  clear(): W[] {
    const all: W[] = [];
    for (const set of this.byId.values()) all.push(...set);
    this.byId.clear();
    this.count = 0;
    return all;
  }
}

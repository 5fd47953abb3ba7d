/** Anything waiting for one job id. */
export interface Watch {
  readonly id: number;
}

/**
 * The pending watches of a process by job id: add, remove, and take all of one id in O(1), so
 * a settled job finds its waiters by lookup whatever their number. An id with one watch (the
 * usual case) holds it directly, not in a Set: 10,000 waiters are 10,000 fewer objects for
 * every garbage collection to mark.
 */
export class WaiterRegistry<W extends Watch> {
  private readonly byId = new Map<number, W | Set<W>>();
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
    const held = this.byId.get(watch.id);
    if (held === undefined) this.byId.set(watch.id, watch);
    else if (held instanceof Set) {
      if (held.has(watch)) return;
      held.add(watch);
    } else {
      if (held === watch) return;
      this.byId.set(watch.id, new Set([held, watch]));
    }
    this.count++;
  }

  /** True if it was still pending. */
  remove(watch: W): boolean {
    const held = this.byId.get(watch.id);
    if (held instanceof Set) {
      if (!held.delete(watch)) return false;
      if (!held.size) this.byId.delete(watch.id);
    } else {
      if (held !== watch) return false;
      this.byId.delete(watch.id);
    }
    this.count--;
    return true;
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  /** The watches of `id` (a copy), without removing them. */
  get(id: number): W[] {
    const held = this.byId.get(id);
    return held === undefined ? [] : held instanceof Set ? [...held] : [held];
  }

  /** Removes and returns every watch of `id`. */
  take(id: number): W[] {
    const watches = this.get(id);
    this.byId.delete(id);
    this.count -= watches.length;
    return watches;
  }

  /** Every id with a watch pending. */
  ids(): number[] {
    return [...this.byId.keys()];
  }

  /** Removes and returns everything. */
  clear(): W[] {
    const all: W[] = [];
    for (const held of this.byId.values()) {
      if (held instanceof Set) all.push(...held);
      else all.push(held);
    }
    this.byId.clear();
    this.count = 0;
    return all;
  }
}

/**
 * One computation shared by every caller for `ttlMs`: however many dashboards are open, a
 * process runs the query behind a key at most once per interval, and concurrent callers wait
 * for the same promise instead of starting their own (no polling storm on the database).
 */
export class SharedSnapshots<T> {
  private readonly entries = new Map<string, { at: number; value: Promise<T> }>();

  constructor(
    private readonly ttlMs: number,
    /** Distinct keys kept at once; the oldest is dropped beyond it (bounded memory). */
    private readonly maxKeys = 100,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string, compute: () => Promise<T>): Promise<T> {
    const t = this.now();
    const hit = this.entries.get(key);
    if (hit && t - hit.at < this.ttlMs) return hit.value;
    const value = compute();
    this.entries.delete(key);
    this.entries.set(key, { at: t, value });
    // A failure is not cached: the next caller tries again.
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    while (this.entries.size > this.maxKeys) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }

  /** Forget everything (after an action, so the next read shows its effect). */
  clear(): void {
    this.entries.clear();
  }
}

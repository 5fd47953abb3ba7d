/** A paced read: its value is kept `factor` times as long as the read took, at most `maxMs`. */
export interface ReadPace {
  factor: number;
  maxMs: number;
}

/**
 * A value read at most once per `ttlMs`, and never twice at once: callers that arrive while a
 * read is in flight share it, and callers within `ttlMs` of the last read get its value. Ten
 * scrapers at once cost one query. A failed read is not cached (the next caller tries again).
 * With a `pace`, a slow read is kept longer (up to `pace.maxMs`), so that a read whose cost grows
 * with the data takes a bounded share of the time however large the data grows.
 */
export class CachedRead<T> {
  private value: { at: number; data: T; ttlMs: number } | undefined;
  private inFlight: Promise<T> | undefined;
  /** Reads actually started (for tests and the curious). */
  reads = 0;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly pace?: ReadPace,
  ) {}

  /** Whether the last value is still within its ttl: `get()` would give it without a read. */
  get fresh(): boolean {
    return this.value !== undefined && this.now() - this.value.at < this.value.ttlMs;
  }

  /** The last value read, however old (undefined before the first). */
  get last(): T | undefined {
    return this.value?.data;
  }

  get(): Promise<T> {
    if (this.fresh) return Promise.resolve(this.value!.data);
    if (this.inFlight) return this.inFlight;
    this.reads++;
    const started = this.now();
    this.inFlight = this.load().then(
      (data) => {
        this.value = { at: started, data, ttlMs: this.ttlFor(this.now() - started) };
        this.inFlight = undefined;
        return data;
      },
      (err: unknown) => {
        this.inFlight = undefined;
        throw err;
      },
    );
    return this.inFlight;
  }

  private ttlFor(tookMs: number): number {
    if (!this.pace) return this.ttlMs;
    return Math.max(this.ttlMs, Math.min(this.pace.factor * tookMs, this.pace.maxMs));
  }

  /**
   * `get()`, waiting at most `waitMs`: a read that fails or has not answered by then gives the
   * last value read, however old (undefined before the first). The read goes on meanwhile, shared,
   * and a later call gets what it brings: a database that stops answering costs one pending read,
   * not one per caller, and never a caller that waits on it.
   */
  async getWithin(waitMs: number): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)));
    try {
      return (await Promise.race([this.get().catch(() => undefined), late])) ?? this.last;
    } finally {
      clearTimeout(timer);
    }
  }
}

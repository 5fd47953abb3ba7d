/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * What the no-op handlers saw: executions per job id (for the correctness check), when the first
 * one started, and the start time per latency tag. One log per process; reset before each run.
 */
export class ExecutionLog {
  static current = new ExecutionLog();
  /** Called at a tagged job's first start, in whichever log is current (a worker child forwards it to the bench). */
  static onTag: ((tag: number, at: number) => void) | undefined;

  readonly counts = new Map<string, number>();
  /** Order of each job's first start (0-based), for dependency-order checks. */
  readonly firstSeq = new Map<string, number>();
  total = 0;
  firstStartAt: number | undefined;
  lastStartAt: number | undefined;
  private readonly tagStarts = new Map<number, number>();
  private readonly tagWaiters = new Map<number, (at: number) => void>();
  /** Dense mode: executions per integer id in a byte array, so the log itself barely uses heap. */
  private dense: Uint8Array | undefined;
  private denseDistinct = 0;

  static reset(): ExecutionLog {
    ExecutionLog.current = new ExecutionLog();
    return ExecutionLog.current;
  }

  /**
   * Counts integer ids in a growable byte array instead of Maps (no `firstSeq`), for worker
   * processes whose memory is being measured: a Map entry per job would look like a leak.
   */
  useDenseIds(): this {
    this.dense = new Uint8Array(1 << 16);
    return this;
  }

  record(id: string | number, tag?: number): void {
    const at = wallNow();
    if (this.dense && typeof id === 'number' && Number.isInteger(id) && id >= 0) this.recordDense(id);
    else {
      const key = String(id);
      if (!this.counts.has(key)) this.firstSeq.set(key, this.firstSeq.size);
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    }
    this.total++;
    this.firstStartAt ??= at;
    this.lastStartAt = at;
    if (tag !== undefined && !this.tagStarts.has(tag)) {
      ExecutionLog.onTag?.(tag, at);
      this.tagStarts.set(tag, at);
      this.tagWaiters.get(tag)?.(at);
      this.tagWaiters.delete(tag);
    }
  }

  private recordDense(id: number): void {
    if (id >= this.dense!.length) {
      const grown = new Uint8Array(Math.max(this.dense!.length * 2, id + 1));
      grown.set(this.dense!);
      this.dense = grown;
    }
    if (this.dense![id] === 0) this.denseDistinct++;
    if (this.dense![id] < 255) this.dense![id]++;
  }

  /**
   * A tagged job started at `at` in another process (a worker child reports it over IPC): wakes
   * `waitForTag` without counting an execution here (the child's own log counts it).
   */
  tagStarted(tag: number, at: number): void {
    if (this.tagStarts.has(tag)) return;
    this.tagStarts.set(tag, at);
    this.tagWaiters.get(tag)?.(at);
    this.tagWaiters.delete(tag);
  }

  get distinct(): number {
    return this.counts.size + this.denseDistinct;
  }

  /** Resolves with the wall time the job tagged `tag` started; rejects after `timeoutMs`. */
  waitForTag(tag: number, timeoutMs: number): Promise<number> {
    const seen = this.tagStarts.get(tag);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.tagWaiters.delete(tag);
        reject(new Error(`job tagged ${tag} did not start within ${timeoutMs} ms`));
      }, timeoutMs);
      this.tagWaiters.set(tag, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  /** Serializable summary for the parent process. */
  snapshot(): ExecutionSnapshot {
    const counts = [...this.counts];
    if (this.dense) this.dense.forEach((n, id) => n && counts.push([String(id), n]));
    return { counts, total: this.total, firstStartAt: this.firstStartAt, lastStartAt: this.lastStartAt };
  }
}

export interface ExecutionSnapshot {
  counts: Array<[string, number]>;
  total: number;
  firstStartAt: number | undefined;
  lastStartAt: number | undefined;
}

/** Merges the logs of several worker processes. */
export function mergeSnapshots(parts: ExecutionSnapshot[]): ExecutionSnapshot {
  const counts = new Map<string, number>();
  for (const p of parts) for (const [id, n] of p.counts) counts.set(id, (counts.get(id) ?? 0) + n);
  const firsts = parts.map((p) => p.firstStartAt).filter((t): t is number => t !== undefined);
  const lasts = parts.map((p) => p.lastStartAt).filter((t): t is number => t !== undefined);
  return {
    counts: [...counts],
    total: parts.reduce((n, p) => n + p.total, 0),
    firstStartAt: firsts.length ? Math.min(...firsts) : undefined,
    lastStartAt: lasts.length ? Math.max(...lasts) : undefined,
  };
}

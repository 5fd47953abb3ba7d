/** Writes one job's progress; rejects if the write failed. */
export type ProgressWrite = (id: number, percent: number, stage: string | null) => Promise<void>;

interface Waiting {
  percent: number;
  stage: string | null;
  settle: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
}

/**
 * `ctx.progress()` writes, at most one in flight per job: a call made while one is in flight
 * replaces any value still waiting, and the latest is written when the write ends, so its
 * promise settles with that write. Each call wrote at once: a handler reporting in a loop
 * without awaiting queued one statement per call on the pool (40 jobs x 1,000 calls: 103 s on
 * PostgreSQL, claims waiting behind them for 47 s), and writes overtaking each other on two
 * connections left an older value stored (37 of 40 jobs ended on a stage before their last).
 * Awaited calls are written one by one, as before.
 */
export class ProgressWrites {
  /** Jobs with a write in flight, and the value waiting to follow it (null: none). */
  private readonly jobs = new Map<number, Waiting | null>();
  /** Callers of `settled` per job, told when its last write has ended. */
  private readonly drains = new Map<number, Array<() => void>>();

  constructor(private readonly write: ProgressWrite) {}

  report(id: number, percent: number, stage: string | null): Promise<void> {
    if (!this.jobs.has(id)) {
      this.jobs.set(id, null);
      return this.start(id, percent, stage);
    }
    let waiting = this.jobs.get(id);
    if (!waiting) this.jobs.set(id, (waiting = { percent, stage, settle: [] }));
    waiting.percent = percent;
    waiting.stage = stage;
    const settle = waiting.settle;
    return new Promise<void>((resolve, reject) => settle.push({ resolve, reject }));
  }

  /**
   * Resolves once the job has no write in flight nor waiting (at once if it has none). A handler
   * that reports its last stage without awaiting it returns while that write waits behind the
   * one before: finalized first, the job was no longer running when the write came, which was
   * refused, and the job ended on the stage before its last.
   */
  settled(id: number): Promise<void> | undefined {
    if (!this.jobs.has(id)) return undefined;
    return new Promise<void>((resolve) => {
      const drains = this.drains.get(id);
      if (drains) drains.push(resolve);
      else this.drains.set(id, [resolve]);
    });
  }

  private start(id: number, percent: number, stage: string | null): Promise<void> {
    const written = this.write(id, percent, stage);
    void written.then(
      () => this.next(id),
      () => this.next(id),
    );
    return written;
  }

  private next(id: number): void {
    const waiting = this.jobs.get(id);
    if (!waiting) {
      this.jobs.delete(id);
      const drains = this.drains.get(id);
      this.drains.delete(id);
      drains?.forEach((resolve) => resolve());
      return;
    }
    this.jobs.set(id, null);
    this.start(id, waiting.percent, waiting.stage).then(
      () => waiting.settle.forEach((s) => s.resolve()),
      (err) => waiting.settle.forEach((s) => s.reject(err)),
    );
  }
}

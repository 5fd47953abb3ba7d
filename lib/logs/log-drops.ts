/**
 * Reports `ctx.log()` lines that could not be stored. While the database is down every write
 * fails, and a handler logging in a loop failed one a turn: a warning each was a storm (hundreds
 * a second). The first drop is reported at once; later ones are summed up, at most one warning
 * per `everyMs` (and what is left at `flush()`, at shutdown).
 */
export class LogDrops {
  private lines = 0;
  private readonly jobs = new Set<number>();
  private lastError = '';
  private quietUntil = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly warn: (message: string) => void,
    private readonly everyMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  dropped(id: number, lines: number, err: unknown): void {
    const reason = errorText(err);
    if (this.now() >= this.quietUntil && !this.lines) {
      this.quietUntil = this.now() + this.everyMs;
      this.warn(`could not store ${lines} log line(s) of job ${id} (${reason}); they are dropped (more drops: one warning per ${this.everyMs / 1_000} s)`);
      return;
    }
    this.lines += lines;
    this.jobs.add(id);
    this.lastError = reason;
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), Math.max(0, this.quietUntil - this.now()));
      this.timer.unref();
    }
  }

  /** Reports the drops not yet reported (at shutdown: the timer would not outlive the process). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.lines) return;
    this.warn(`could not store ${this.lines} more log line(s) of ${this.jobs.size} job(s) (last: ${this.lastError}); they are dropped`);
    this.lines = 0;
    this.jobs.clear();
    this.quietUntil = this.now() + this.everyMs;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

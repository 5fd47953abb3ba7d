/** The least a shutdown waits for the database after the jobs' grace period. */
export const MIN_DATABASE_WAIT_MS = 2_000;

/**
 * One bound on everything `app.close()` waits for: running jobs get `shutdownGraceMs`, then the
 * database as long again (at least MIN_DATABASE_WAIT_MS) to take their results and hand-backs.
 * A server that stops answering would otherwise hold the shutdown until an orchestrator's
 * SIGKILL: every claim, finalize and statement in flight waits for it, and so does closing the
 * pool, which waits for the connections those statements hold.
 */
export class ShutdownDeadline {
  private readonly at: number;
  private passed = false;

  constructor(
    graceMs: number,
    /** Called once, with what was still awaited when the deadline passed. */
    private readonly onPassed: (what: string) => void,
  ) {
    this.at = Date.now() + graceMs + Math.max(graceMs, MIN_DATABASE_WAIT_MS);
  }

  get expired(): boolean {
    return this.passed;
  }

  /**
   * Waits for `work` until the deadline: true if it settled in time (a rejection is rethrown),
   * false if the deadline passed first (the work goes on, unobserved).
   */
  async wait(work: Promise<unknown>, what: string): Promise<boolean> {
    const left = this.at - Date.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, left))));
    work.catch(() => undefined); // a failure after the deadline is nobody's to handle
    try {
      const settled = await Promise.race([work.then(() => true as const), late]);
      if (!settled && !this.passed) {
        this.passed = true;
        this.onPassed(what);
      }
      return settled;
    } finally {
      clearTimeout(timer);
    }
  }
}

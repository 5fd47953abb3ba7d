import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Lets the event loop turn while the process runs synchronous statements back to back. SQLite's
 * driver answers synchronously, so a caller looping `await enqueue(...)` ran on microtasks alone:
 * no timer (heartbeats, claims, sweeps) nor I/O (requests) ran until the loop ended, 2.8 s for
 * 20,000 enqueues. `beforeStatement()` gives the loop a turn once the statements since its last
 * turn have held it for `maxMs`; otherwise it costs a clock read.
 */
export class LoopTurns {
  /** When the loop was last seen turning (a marker scheduled with setImmediate ran). */
  private turnedAt = 0;
  private markerPending = false;

  constructor(
    private readonly maxMs = 20,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async beforeStatement(): Promise<void> {
    const now = this.now();
    if (!this.markerPending) {
      // No marker pending: the loop turned since the last one; the statements hold it from now.
      this.turnedAt = now;
      this.markerPending = true;
      setImmediate(() => (this.markerPending = false));
      return;
    }
    // An immediate queued now runs after the loop's timers and I/O of its next turn.
    if (now - this.turnedAt >= this.maxMs) await nextTurn();
  }
}

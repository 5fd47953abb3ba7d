import { DEFAULT_START_ALLOWANCE_MS } from '../claim/rate-gate';

/** Delays remembered: recent enough to follow the machine's load, enough for a high percentile. */
const SAMPLES = 40;
const FLOOR_MS = 5;

/**
 * How long after a rate-limited claim's admission this process asks to start its jobs: the
 * 95th percentile of the last delays it measured from admission to handler start, with a
 * quarter more and a few ms of headroom. The window counts each claim at that allowance, so a
 * smaller one gives a higher achieved rate; a start later than it goes back unstarted, so too
 * small an allowance costs a hand-back (and grows the allowance through its sample).
 */
export class StartAllowance {
  private readonly delays: number[] = [];

  observe(delayMs: number): void {
    this.delays.push(delayMs);
    if (this.delays.length > SAMPLES) this.delays.shift();
  }

  get ms(): number {
    if (this.delays.length < 5) return DEFAULT_START_ALLOWANCE_MS;
    const sorted = [...this.delays].sort((a, b) => a - b);
    const p95 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)];
    return Math.max(FLOOR_MS, Math.ceil(p95 * 1.25) + 2);
  }
}

import type { ClaimedJob } from '../claim/claimed-job';

/** Mean handler time under which prefetching pays: jobs this short are dominated by round trips. */
const SHORT_JOB_MS = 100;
/** A prefetched job not started within this long goes back to the queue for other workers. */
export const MAX_PREFETCH_WAIT_MS = 1_000;

/**
 * Jobs claimed ahead of free slots, so that short jobs start without a round trip each and
 * claims come in batches. They are already `running` under this worker's lease (renewed by
 * its heartbeat). Prefetching only happens while jobs are short, so a worker never sits on
 * jobs another idle worker could be running; and what waits too long is handed back.
 */
export class PrefetchBuffer {
  private readonly jobs: Array<{ job: ClaimedJob; at: number }> = [];
  private meanMs = 0;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.jobs.length;
  }

  /** How many more to claim now: the room left, while jobs are short; otherwise none. */
  room(): number {
    return this.capacity > 0 && this.meanMs < SHORT_JOB_MS ? this.capacity - this.jobs.length : 0;
  }

  /** Whether it is worth a claim to top it up (below half), when no slot is free. */
  get low(): boolean {
    return this.room() > 0 && this.jobs.length <= this.capacity / 2;
  }

  add(jobs: ClaimedJob[]): void {
    const now = Date.now();
    for (const job of jobs) this.jobs.push({ job, at: now });
  }

  take(n: number): ClaimedJob[] {
    return this.jobs.splice(0, Math.max(0, n)).map((e) => e.job);
  }

  /** Removes these ids (cancelled, or lease lost); returns how many were here. */
  remove(ids: Iterable<number>): number {
    const drop = new Set(ids);
    let removed = 0;
    for (let i = this.jobs.length - 1; i >= 0; i--) {
      if (drop.has(this.jobs[i].job.id)) {
        this.jobs.splice(i, 1);
        removed++;
      }
    }
    return removed;
  }

  /** Removes and returns jobs waiting longer than `maxWaitMs` (all of them with 0). */
  takeStale(maxWaitMs: number): ClaimedJob[] {
    const cutoff = Date.now() - maxWaitMs;
    const stale = this.jobs.filter((e) => e.at <= cutoff).map((e) => e.job);
    this.remove(stale.map((j) => j.id));
    return stale;
  }

  ids(): number[] {
    return this.jobs.map((e) => e.job.id);
  }

  /** Feeds a handler's run time into the moving mean that switches prefetching on and off. */
  observe(durationMs: number): void {
    this.meanMs = this.meanMs === 0 ? durationMs : this.meanMs * 0.9 + durationMs * 0.1;
  }
}

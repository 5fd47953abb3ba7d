import type { PendingLogLine } from './log-line';

/** Writes lines of one job, in order; rejects if the write failed. */
export type LogWrite = (id: number, lines: PendingLogLine[]) => Promise<void>;

interface JobLog {
  pending: PendingLogLine[];
  drains: Array<() => void>;
}

/**
 * `ctx.log()` lines on their way to the database, at most one write in flight per job: lines
 * logged meanwhile wait and go together in the next one, so a handler logging in a loop costs a
 * statement per turn of the event loop, not one per line (as ProgressWrites does for progress).
 * The first line of a burst waits one turn, so that lines logged in one synchronous stretch
 * share a statement. A failed write is reported and its lines dropped: a log never fails a job.
 */
export class LogWrites {
  private readonly jobs = new Map<number, JobLog>();

  constructor(
    private readonly write: LogWrite,
    private readonly failed: (id: number, lines: number, err: unknown) => void,
  ) {}

  append(id: number, line: PendingLogLine): void {
    const job = this.jobs.get(id);
    if (job) {
      job.pending.push(line);
      return;
    }
    const started: JobLog = { pending: [line], drains: [] };
    this.jobs.set(id, started);
    setImmediate(() => void this.flush(id, started));
  }

  /** Resolves once every line appended so far for the job is written or dropped (undefined: none waiting). */
  settled(id: number): Promise<void> | undefined {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    return new Promise<void>((resolve) => job.drains.push(resolve));
  }

  private async flush(id: number, job: JobLog): Promise<void> {
    while (job.pending.length) {
      const lines = job.pending;
      job.pending = [];
      try {
        await this.write(id, lines);
      } catch (err) {
        this.failed(id, lines.length, err);
      }
    }
    this.jobs.delete(id);
    for (const resolve of job.drains) resolve();
  }
}

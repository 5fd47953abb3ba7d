import type { SqlExecutor } from '../database/sql-executor';
import type { JobQueueInstrumentation } from '../instrumentation/job-queue.instrumentation';
import { insertLogLines } from './job-logs.sql';
import { LogDrops } from './log-drops';
import type { PendingLogLine } from './log-line';
import { LogWrites } from './log-writes';

/**
 * Where a worker's `ctx.log()` lines go: to the database in coalesced writes (LogWrites), their
 * failures to one warning at a time (LogDrops), and to the instrumentation, if any (span events).
 */
export class JobLogSink {
  private readonly writes: LogWrites;
  private readonly drops: LogDrops;

  constructor(
    db: SqlExecutor,
    warn: (message: string) => void,
    private readonly instrumentation?: JobQueueInstrumentation,
  ) {
    this.drops = new LogDrops(warn);
    this.writes = new LogWrites(
      (id, lines) => insertLogLines(db, id, lines),
      (id, lines, err) => this.drops.dropped(id, lines, err),
    );
  }

  /** Called in the handler's own context (the span an instrumentation sees active is its). */
  append(id: number, line: PendingLogLine): void {
    this.writes.append(id, line);
    if (!this.instrumentation?.onLog) return;
    try {
      this.instrumentation.onLog({ id, attempt: line.attempt, message: line.message });
    } catch {
      // Must not throw (see JobQueueInstrumentation.onLog); a line is never worth the handler's run.
    }
  }

  /** Resolves once the job's lines so far are written or dropped (undefined: none pending). */
  settled(id: number): Promise<void> | undefined {
    return this.writes.settled(id);
  }

  /** Reports drops not yet reported (at shutdown). */
  flushWarnings(): void {
    this.drops.flush();
  }
}

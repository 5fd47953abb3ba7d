import { databaseNow } from '../database/database-now.sql';
import type { SqlExecutor } from '../database/sql-executor';
import { countFinished, MINUTE_MS, minuteStarts, minuteStrata } from './finished-strata';
import { readFinishedStrata } from './finished-strata.sql';

/**
 * Finished rows one stretch's read takes at most: 4 stretches a minute, at most 4,000 rows, exact
 * up to 66 jobs a second; above the 500-row finalize batch that shares one finished_at (see
 * finished-strata.ts). On PostgreSQL each row read is a heap visit (state is not in the index).
 */
export const THROUGHPUT_ROWS_PER_STRATUM = 1_000;
/**
 * A minute is read again until this long after its end: PostgreSQL stamps finished_at with the
 * transaction's start, so a finalize batch commits rows a little in the past.
 */
const SETTLE_MS = MINUTE_MS;

export interface ThroughputMinute {
  minutesAgo: number;
  done: number;
  failed: number;
  /** More finished than one bounded read takes: extrapolated (finished-strata.ts). */
  estimated: boolean;
}

type MinuteCount = Omit<ThroughputMinute, 'minutesAgo'>;

/**
 * The last `minutes` minutes of finished jobs, one bounded statement per minute. Settled minutes
 * are kept and never read again, so a refresh reads the last two or three minutes.
 */
export class ThroughputHistory {
  private readonly settled = new Map<number, MinuteCount>();

  constructor(
    private readonly minutes: number,
    private readonly cap = THROUGHPUT_ROWS_PER_STRATUM,
  ) {}

  async read(db: SqlExecutor): Promise<ThroughputMinute[]> {
    const now = (await databaseNow(db)).getTime();
    const starts = minuteStarts(new Date(now), this.minutes);
    for (const key of this.settled.keys()) if (key < starts[0]) this.settled.delete(key);
    const out: ThroughputMinute[] = [];
    for (const [i, start] of starts.entries()) {
      let count = this.settled.get(start);
      if (!count) {
        const until = Math.min(start + MINUTE_MS, now + 1);
        const stretches = minuteStrata(start, until);
        const { done, failed, estimated } = countFinished(await readFinishedStrata(db, stretches, this.cap), stretches, until, this.cap);
        count = { done, failed, estimated };
        if (start + MINUTE_MS + SETTLE_MS <= now) this.settled.set(start, count);
        // SQLite runs each read on the event loop: let the workers' timers run between minutes.
        if (db.dialect.name === 'sqlite') await new Promise((resolve) => setImmediate(resolve));
      }
      out.push({ minutesAgo: starts.length - 1 - i, ...count });
    }
    return out;
  }
}

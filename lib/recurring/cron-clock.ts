import { CronTime } from 'cron';

/** Entries kept before the memo starts over: bounds memory whatever the schedules. */
const MAX_MEMO = 20_000;

/**
 * The next slot of a cron in a zone, memoized. The `cron` package takes 0.5–1.5 ms per
 * `getNextDateFrom` (luxon works through the date field by field), and a tick asked it three
 * times per due schedule: 10,000 tenant schedules due in the same minute kept one process busy for
 * about 20 s, past the misfire grace, so most of their slots were skipped as missed. Tenants
 * mostly share a handful of expressions and are due at the same slot, so the same question comes
 * back thousands of times per tick; the answer depends on nothing else.
 */
export class CronClock {
  private readonly times = new Map<string, CronTime>();
  private readonly memo = new Map<string, Date>();

  /** The first slot strictly after `after`. */
  next(cron: string, timeZone: string, after: Date): Date {
    const key = `${cron}\n${timeZone}\n${after.getTime()}`;
    const hit = this.memo.get(key);
    if (hit) return new Date(hit.getTime());
    const at = this.cronTime(cron, timeZone).getNextDateFrom(after, timeZone).toJSDate();
    if (this.memo.size >= MAX_MEMO) this.memo.clear();
    this.memo.set(key, at);
    return new Date(at.getTime());
  }

  private cronTime(cron: string, timeZone: string): CronTime {
    const key = `${cron}\n${timeZone}`;
    let time = this.times.get(key);
    if (!time) {
      if (this.times.size >= MAX_MEMO) this.times.clear();
      time = new CronTime(cron, timeZone);
      this.times.set(key, time);
    }
    return time;
  }
}

/**
 * Counting finished jobs over a span of time from bounded reads. The span is cut into stretches,
 * and each stretch reads at most `cap` finished rows in finished_at order. A quiet stretch is
 * counted exactly; a busy one is extrapolated from the rate its rows show. A queue finishing
 * 10,000 jobs a second then costs the same reads as one finishing 100 a minute.
 *
 * Finished rows come in clusters that share one finished_at: a finalize batch (up to 500 rows)
 * is stamped with its statement's or transaction's clock. The rate is therefore taken from the
 * rows before the last instant read (the read may have cut that cluster anywhere), over the time
 * from the first one (nothing finished between the stretch's start and it) to the last, and
 * applied from the first to the stretch's end; `cap` is above the largest batch, so those rows are
 * at least half the read. A larger
 * cluster (cancelling a 100,000-job graph stamps every row at once) that fills a read on its own
 * leaves no rate: the stretch counts what it read (a lower bound), and it skews only that stretch.
 */

export const MINUTE_MS = 60_000;
/** Stretches per minute of the dashboard's chart (15 s each). */
export const MINUTE_STRATA = 4;

export interface Stretch {
  from: number;
  to: number;
}

/** What one stretch's bounded read returned. */
export interface StratumSample {
  done: number;
  failed: number;
  /** Finished rows read in all (cancelled ones too): `cap` means the read stopped early. */
  rows: number;
  /** finished_at of the first and the last row read, when any. */
  first: Date | null;
  last: Date | null;
  /** Rows read that finished before `last`: all, done and failed (the cut cluster at `last` may be any mix). */
  beforeLast: number;
  doneBefore: number;
  failedBefore: number;
  /** Sum of started → finished ms of the done rows read that have a start, and how many. */
  doneMs: number;
  timed: number;
}

export interface FinishedCount {
  done: number;
  failed: number;
  /** True when some stretch held more finished rows than one read takes: the counts are extrapolated. */
  estimated: boolean;
  /** Mean started → finished ms of the done jobs (null when none had a start). */
  meanDurationMs: number | null;
}

export const EMPTY_SAMPLE: Readonly<StratumSample> = { done: 0, failed: 0, rows: 0, first: null, last: null, beforeLast: 0, doneBefore: 0, failedBefore: 0, doneMs: 0, timed: 0 };

/** Starts of the `minutes` whole minutes ending with the one that holds `now`, oldest first. */
export function minuteStarts(now: Date, minutes: number): number[] {
  const current = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
  return Array.from({ length: minutes }, (_, i) => current - (minutes - 1 - i) * MINUTE_MS);
}

/** [from, until) cut into `n` equal stretches (whole milliseconds, the last one ending at `until`). */
export function evenStrata(from: number, until: number, n: number): Stretch[] {
  const step = Math.max(1, Math.ceil((until - from) / n));
  const out: Stretch[] = [];
  for (let t = from; t < until; t += step) out.push({ from: t, to: Math.min(until, t + step) });
  return out;
}

/** The stretches of the minute starting at `start` that have begun by `until`, cut where the minute's quarters are. */
export function minuteStrata(start: number, until: number): Stretch[] {
  return evenStrata(start, start + MINUTE_MS, MINUTE_STRATA).filter((s) => s.from < until);
}

/**
 * One stretch's counts: exact when the read took every row; else the rows before the last instant
 * read, per state, scaled from [first, last) to [first, the stretch's end or `until`). Never fewer
 * than were read: when that estimate is lower, or there is no rate, the counts read stand.
 */
function countStretch(sample: StratumSample, stretch: Stretch, until: number, cap: number): FinishedCount & { timed: number } {
  const mean = sample.timed ? sample.doneMs / sample.timed : null;
  const read = { done: sample.done, failed: sample.failed, estimated: sample.rows >= cap, meanDurationMs: mean, timed: sample.timed };
  if (sample.rows < cap || !sample.first || !sample.last) return read;
  const first = sample.first.getTime();
  const elapsed = sample.last.getTime() - first;
  if (sample.beforeLast === 0 || elapsed <= 0) return read;
  const factor = Math.max(elapsed, Math.min(stretch.to, until) - first) / elapsed;
  if (sample.beforeLast * factor < sample.rows) return read;
  const done = sample.doneBefore * factor;
  return { done, failed: sample.failedBefore * factor, estimated: true, meanDurationMs: mean, timed: sample.done ? (sample.timed * done) / sample.done : 0 };
}

/**
 * Counts over `stretches` (`samples[i]` read from `stretches[i]`), extrapolating each capped stretch
 * at its own rate and mix, up to `until` (now, for a span still in progress). The mean duration
 * weighs each stretch's sample mean by its estimated done jobs.
 */
export function countFinished(samples: readonly StratumSample[], stretches: readonly Stretch[], until: number, cap: number): FinishedCount {
  let done = 0;
  let failed = 0;
  let doneMs = 0;
  let timed = 0;
  let estimated = false;
  stretches.forEach((stretch, i) => {
    const c = countStretch(samples[i] ?? EMPTY_SAMPLE, stretch, until, cap);
    estimated ||= c.estimated;
    done += c.done;
    failed += c.failed;
    if (c.meanDurationMs !== null) {
      doneMs += c.meanDurationMs * c.timed;
      timed += c.timed;
    }
  });
  return { done: Math.round(done), failed: Math.round(failed), estimated, meanDurationMs: timed ? Math.round(doneMs / timed) : null };
}

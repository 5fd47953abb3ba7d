/**
 * Counting finished jobs over a span of time from bounded reads. The span is cut into stretches,
 * and each stretch reads at most `cap` finished rows in finished_at order. A quiet stretch is
 * counted exactly; a busy one is extrapolated from the part of it its first `cap` rows cover. A
 * queue finishing 10,000 jobs a second then costs the same reads as one finishing 100 a minute,
 * and a burst (cancelling a 100,000-job graph stamps every row with one time) skews only the
 * stretch it fell in.
 */

export const MINUTE_MS = 60_000;
/** Stretches per minute of the dashboard's chart (5 s each). */
export const MINUTE_STRATA = 12;

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
  /** finished_at of the last row read, when any. */
  last: Date | null;
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

export const EMPTY_SAMPLE: Readonly<StratumSample> = { done: 0, failed: 0, rows: 0, last: null, doneMs: 0, timed: 0 };

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

/** The stretches of the minute starting at `start` that have begun by `until`, cut where the minute's twelfths are. */
export function minuteStrata(start: number, until: number): Stretch[] {
  return evenStrata(start, start + MINUTE_MS, MINUTE_STRATA).filter((s) => s.from < until);
}

/**
 * Scale of one stretch's sample: 1 when the read took every row, else the stretch's length
 * (up to `until`) over the part of it the rows read cover, [from, last].
 */
function scaleOf(sample: StratumSample, stretch: Stretch, until: number, cap: number): number {
  if (sample.rows < cap || !sample.last) return 1;
  const span = Math.max(1, Math.min(stretch.to, until) - stretch.from);
  // +1: finished_at has millisecond steps, so rows at `last` occupy that whole millisecond.
  const covered = Math.min(span, Math.max(1, sample.last.getTime() - stretch.from + 1));
  return span / covered;
}

/**
 * Counts over `stretches` (`samples[i]` read from `stretches[i]`), extrapolating each capped stretch
 * at its own rate and mix, up to `until` (now, for a span still in progress).
 */
export function countFinished(samples: readonly StratumSample[], stretches: readonly Stretch[], until: number, cap: number): FinishedCount {
  let done = 0;
  let failed = 0;
  let doneMs = 0;
  let timed = 0;
  let estimated = false;
  stretches.forEach((stretch, i) => {
    const sample = samples[i] ?? EMPTY_SAMPLE;
    const scale = scaleOf(sample, stretch, until, cap);
    estimated ||= scale > 1;
    done += sample.done * scale;
    failed += sample.failed * scale;
    doneMs += sample.doneMs * scale;
    timed += sample.timed * scale;
  });
  return { done: Math.round(done), failed: Math.round(failed), estimated, meanDurationMs: timed ? Math.round(doneMs / timed) : null };
}

import type { CronTime } from 'cron';
import { CronClock } from './cron-clock';
import type { Backfill } from './schedule-definition';

export interface SlotPlanInput {
  cron: string;
  timeZone: string;
  /** The earliest slot not yet enqueued (the schedule's stored `next_run_at`). */
  from: Date;
  /** The database's clock. */
  now: Date;
  misfireGraceMs: number;
  backfill: Backfill;
  /**
   * Since when the workers have been ticking without a break (the database's clock; the cluster's
   * run, not the planning process's own).
   * Slots are judged late against it, not against `now`: ticks that work through 10,000
   * schedules due at once take seconds, and the last ones are not missed for that. Omitted: `now`.
   */
  tickingSince?: Date;
}

export interface SlotPlan {
  /** Slots to enqueue, oldest first. */
  slots: Array<{ at: Date; backfill: boolean }>;
  /** The first slot after `now`: the schedule's new `next_run_at`. */
  next: Date;
  /** Slots were missed (due for longer than the grace when the ticking began); `backfill` chose which of them run. */
  missed: boolean;
}

/**
 * Which slots a tick enqueues. Due slots are those in [from, now]. A slot due for at most
 * `misfireGraceMs` is on time (a late tick, a busy process) and always enqueued; older ones were
 * missed (no process was ticking) and `backfill` picks the latest 0, 1 or N of them. Pure but for
 * the clock's memo. The common case (one slot due) asks the clock twice: the walk over the on-time
 * slots ends on the first slot after `now`, which is the next one.
 */
export function planSlots(input: SlotPlanInput, clock: CronClock = new CronClock()): SlotPlan {
  const next = (after: Date) => clock.next(input.cron, input.timeZone, after);
  const reference = Math.min(input.now.getTime(), input.tickingSince?.getTime() ?? Infinity);
  const cutoff = reference - input.misfireGraceMs; // slots at or before it were missed
  const start = Math.max(input.from.getTime(), cutoff + 1);
  const onTime = slotsBetween(next, start, input.now.getTime(), MAX_ON_TIME_SLOTS);
  if (onTime.slots.length > MAX_ON_TIME_SLOTS) {
    // A schedule left behind while this process ticked on (its tick transactions failing, say):
    // the latest slots run, the older ones were missed, and `backfill` would pick among those.
    return { slots: latestSlots(next, start, input.now.getTime(), MAX_ON_TIME_SLOTS).map((at) => ({ at, backfill: false })), next: next(input.now), missed: true };
  }
  const wanted = input.backfill === 'none' ? 0 : input.backfill === 'last' ? 1 : input.backfill;
  const missed = wanted > 0 && input.from.getTime() <= cutoff ? latestSlots(next, input.from.getTime(), cutoff, wanted) : [];
  return {
    slots: [...missed.map((at) => ({ at, backfill: true })), ...onTime.slots.map((at) => ({ at, backfill: false }))],
    // The walk stopped at the first slot after the last one at or before `now`: the next slot,
    // unless it started after `now` (a schedule not due yet).
    next: start - 1 <= input.now.getTime() ? onTime.after : next(input.now),
    missed: input.from.getTime() <= cutoff && next(new Date(input.from.getTime() - 1)).getTime() <= cutoff,
  };
}

/** The first slot strictly after `after` (a schedule's first `next_run_at`). */
export function nextSlot(cron: CronTime, timeZone: string, after: Date): Date {
  return cron.getNextDateFrom(after, timeZone).toJSDate();
}

/**
 * On-time slots one tick enqueues for a schedule at most: as many as `backfill` may add. Slots
 * are on time while the process ticks, so without a bound a schedule left behind for days (a
 * per-second one: 86,400 a day) would be planned and inserted in one transaction.
 */
export const MAX_ON_TIME_SLOTS = 1_000;

/** Slots in [startMs, endMs] (at most `max + 1` of them), oldest first, and the first slot after them. */
function slotsBetween(next: (after: Date) => Date, startMs: number, endMs: number, max = Infinity): { slots: Date[]; after: Date } {
  const slots: Date[] = [];
  let at = next(new Date(startMs - 1));
  while (at.getTime() <= endMs && slots.length <= max) {
    slots.push(at);
    at = next(at);
  }
  return { slots, after: at };
}

/**
 * The latest `n` slots in [startMs, endMs]. After a long outage (a per-second schedule down for a
 * week) walking from `startMs` would take millions of steps, so it looks back from `endMs` over a
 * window that doubles until it holds `n` slots or reaches `startMs`.
 */
function latestSlots(next: (after: Date) => Date, startMs: number, endMs: number, n: number): Date[] {
  for (let windowMs = 1_000; ; windowMs *= 2) {
    const lo = Math.max(startMs, endMs - windowMs);
    const found = slotsBetween(next, lo, endMs).slots;
    if (found.length >= n || lo === startMs) return found.slice(-n);
  }
}

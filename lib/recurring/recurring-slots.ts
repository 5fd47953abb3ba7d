import { CronTime } from 'cron';
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
}

export interface SlotPlan {
  /** Slots to enqueue, oldest first. */
  slots: Array<{ at: Date; backfill: boolean }>;
  /** The first slot after `now`: the schedule's new `next_run_at`. */
  next: Date;
}

/**
 * Which slots a tick enqueues. Due slots are those in [from, now]. A slot due for at most
 * `misfireGraceMs` is on time (a late tick, a busy process) and always enqueued; older ones were
 * missed (every process was down) and `backfill` picks the latest 0, 1 or N of them. Pure.
 */
export function planSlots(input: SlotPlanInput): SlotPlan {
  const cron = new CronTime(input.cron, input.timeZone);
  const cutoff = input.now.getTime() - input.misfireGraceMs; // slots at or before it were missed
  const wanted = input.backfill === 'none' ? 0 : input.backfill === 'last' ? 1 : input.backfill;
  const missed = wanted > 0 && input.from.getTime() <= cutoff ? latestSlots(cron, input, input.from.getTime(), cutoff, wanted) : [];
  const onTime = slotsBetween(cron, input.timeZone, Math.max(input.from.getTime(), cutoff + 1), input.now.getTime(), Infinity);
  return {
    slots: [...missed.map((at) => ({ at, backfill: true })), ...onTime.map((at) => ({ at, backfill: false }))],
    next: nextSlot(cron, input.timeZone, input.now),
  };
}

/** The first slot strictly after `after`. */
export function nextSlot(cron: CronTime, timeZone: string, after: Date): Date {
  return cron.getNextDateFrom(after, timeZone).toJSDate();
}

/** Slots in [startMs, endMs], oldest first, at most `max`. */
function slotsBetween(cron: CronTime, timeZone: string, startMs: number, endMs: number, max: number): Date[] {
  const out: Date[] = [];
  let at = nextSlot(cron, timeZone, new Date(startMs - 1));
  while (at.getTime() <= endMs && out.length < max) {
    out.push(at);
    at = nextSlot(cron, timeZone, at);
  }
  return out;
}

/**
 * The latest `n` slots in [startMs, endMs]. After a long outage (a per-second schedule down for a
 * week) walking from `startMs` would take millions of steps, so it looks back from `endMs` over a
 * window that doubles until it holds `n` slots or reaches `startMs`.
 */
function latestSlots(cron: CronTime, input: SlotPlanInput, startMs: number, endMs: number, n: number): Date[] {
  for (let windowMs = 1_000; ; windowMs *= 2) {
    const lo = Math.max(startMs, endMs - windowMs);
    const found = slotsBetween(cron, input.timeZone, lo, endMs, Infinity);
    if (found.length >= n || lo === startMs) return found.slice(-n);
  }
}

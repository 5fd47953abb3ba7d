import type { JobQueueLimits } from '../job-queue.options';
import type { LimitRoom } from './within-limits';

/** Jobs in flight (leased or running), as counted by countInFlight. */
export interface InFlight {
  total: number;
  byGroup: ReadonlyMap<string, number>;
  byType: ReadonlyMap<string, number>;
}

/**
 * The room the caps leave: the global cap, every capped type, and of the capped groups only
 * `groups` (the ones this claim may take from; a group absent from the room is unlimited, so
 * every capped group it may take from must be named). Pure; exact only when the caps' rows were
 * locked before `inFlight` was counted.
 */
export function roomUnderCaps(limits: JobQueueLimits, inFlight: InFlight, groups: Iterable<string>): LimitRoom {
  const room: Required<LimitRoom> = { total: Infinity, groups: {}, types: {} };
  if (limits.global) room.total = limits.global - inFlight.total;
  for (const [t, max] of Object.entries(limits.types ?? {})) room.types[t] = max - (inFlight.byType.get(t) ?? 0);
  const caps = limits.groups ?? {};
  for (const g of groups) {
    if (Object.hasOwn(caps, g)) room.groups[g] = caps[g] - (inFlight.byGroup.get(g) ?? 0);
  }
  return room;
}

/**
 * The capped groups at or over their cap. Only groups with jobs in flight can be, so the cost
 * follows what is in flight, not how many groups the options name.
 */
export function groupsAtCap(limits: JobQueueLimits, inFlight: InFlight): string[] {
  const caps = limits.groups ?? {};
  const full: string[] = [];
  for (const [g, n] of inFlight.byGroup) if (Object.hasOwn(caps, g) && n >= caps[g]) full.push(g);
  return full;
}

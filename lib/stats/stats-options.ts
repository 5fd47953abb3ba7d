import { InvalidQueryError } from '../errors/query.errors';
import { isPlainObject } from '../query/job-filter';

/** `JobQueueService.stats()` options. */
export interface StatsOptions {
  /** The window of `recent`, in ms: up to a year, default 5 minutes. */
  windowMs?: number;
  /** Groups listed in `groups`, busiest first: 1–1,000, default 100 (`groupCount` counts them all). */
  groupsLimit?: number;
  /** Schedules listed in `schedules`, soonest first: 1–1,000, default 100 (`scheduleCount` counts them all). */
  schedulesLimit?: number;
}

export const DEFAULT_STATS_LIST = 100;
export const MAX_STATS_LIST = 1_000;
const DEFAULT_WINDOW_MS = 5 * 60_000;
/** A year: every dialect's date arithmetic stays in range. */
const MAX_WINDOW_MS = 366 * 24 * 3_600_000;
const FIELDS = ['windowMs', 'groupsLimit', 'schedulesLimit'];

/** Validates stats options (pure); throws `InvalidQueryError` naming the bad field. */
export function normalizeStatsOptions(raw: unknown): Required<StatsOptions> {
  if (raw !== undefined && raw !== null && !isPlainObject(raw)) throw new InvalidQueryError('options', 'a plain object { windowMs?, groupsLimit?, schedulesLimit? }', raw);
  const o = (raw ?? {}) as Record<string, unknown>;
  for (const field of Object.keys(o)) {
    if (!FIELDS.includes(field)) throw new InvalidQueryError(`options.${field}`, `one of ${FIELDS.join(', ')}`, field);
  }
  return {
    windowMs: integer(o.windowMs, 'windowMs', DEFAULT_WINDOW_MS, 1, MAX_WINDOW_MS),
    groupsLimit: integer(o.groupsLimit, 'groupsLimit', DEFAULT_STATS_LIST, 1, MAX_STATS_LIST),
    schedulesLimit: integer(o.schedulesLimit, 'schedulesLimit', DEFAULT_STATS_LIST, 1, MAX_STATS_LIST),
  };
}

function integer(value: unknown, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidQueryError(field, `an integer from ${min} to ${max.toLocaleString('en-US')}`, value);
  }
  return value;
}

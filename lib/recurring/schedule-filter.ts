import { InvalidQueryError } from '../errors/query.errors';
import { isPlainObject } from '../query/job-filter';
import type { ScheduleView } from './schedule-view';

/** What `findSchedules` selects; every field optional. */
export interface ScheduleFilter {
  /** Schedules that enqueue this job type. */
  type?: string;
}

export interface FindSchedulesResult {
  /** By name, in the database's order for text. */
  schedules: ScheduleView[];
  /** Pass as `cursor` for the next page; null when there is nothing more. */
  nextCursor: string | null;
}

/** Validates a schedule filter (pure); throws `InvalidQueryError` naming the bad field. */
export function normalizeScheduleFilter(raw: unknown): ScheduleFilter {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) throw new InvalidQueryError('filter', 'a plain object { type? }', raw);
  for (const field of Object.keys(raw)) {
    if (field !== 'type') throw new InvalidQueryError(`filter.${field}`, 'the known field type', field);
  }
  const type = raw.type;
  if (type === undefined) return {};
  if (typeof type !== 'string' || !type || type.length > 200) throw new InvalidQueryError('type', 'a non-empty string of at most 200 characters', type);
  return { type };
}

/** The filter as the cursor's hash sees it: equal filters, equal text. */
export function scheduleFilterText(filter: ScheduleFilter): string {
  return JSON.stringify(['schedules', filter.type ?? null]);
}

import { InvalidQueryError } from '../errors/query.errors';
import { isPlainObject } from '../query/job-filter';
import { isStorableText, STORABLE_TEXT } from '../options/storable-text';
import type { ScheduleView } from './schedule-view';

/** What `findSchedules` selects; every field optional. */
export interface ScheduleFilter {
  /** Schedules that enqueue this job type. */
  type?: string;
  /** Schedules whose jobs go to this group (a tenant's schedules). */
  group?: string;
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
  if (!isPlainObject(raw)) throw new InvalidQueryError('filter', 'a plain object { type?, group? }', raw);
  const out: ScheduleFilter = {};
  for (const field of Object.keys(raw)) {
    if (field !== 'type' && field !== 'group') throw new InvalidQueryError(`filter.${field}`, 'one of the known fields (type, group)', field);
    const value = raw[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !value || value.length > 200 || !isStorableText(value)) {
      throw new InvalidQueryError(field, `a non-empty string of at most 200 characters ${STORABLE_TEXT}`, value);
    }
    out[field] = value;
  }
  return out;
}

/** The filter as the cursor's hash sees it: equal filters, equal text. */
export function scheduleFilterText(filter: ScheduleFilter): string {
  return JSON.stringify(['schedules', filter.type ?? null, filter.group ?? null]);
}

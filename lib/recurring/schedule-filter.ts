import { InvalidQueryError } from '../errors/query.errors';
import { isPlainObject } from '../query/job-filter';
import { isStorableText, STORABLE_TEXT } from '../options/storable-text';
import { MAX_SCHEDULE_NAME_LENGTH } from './schedule-definition';
import type { ScheduleView } from './schedule-view';

/** What `findSchedules` selects; every field optional. */
export interface ScheduleFilter {
  /** The schedule of this name (at most one). */
  name?: string;
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
  if (!isPlainObject(raw)) throw new InvalidQueryError('filter', 'a plain object { name?, type?, group? }', raw);
  const out: ScheduleFilter = {};
  for (const field of Object.keys(raw)) {
    if (field !== 'name' && field !== 'type' && field !== 'group') throw new InvalidQueryError(`filter.${field}`, 'one of the known fields (name, type, group)', field);
    const value = raw[field];
    if (value === undefined) continue;
    const max = field === 'name' ? MAX_SCHEDULE_NAME_LENGTH : 200;
    if (typeof value !== 'string' || !value || value.length > max || !isStorableText(value)) {
      throw new InvalidQueryError(field, `a non-empty string of at most ${max} characters ${STORABLE_TEXT}`, value);
    }
    out[field] = value;
  }
  return out;
}

/** The filter as the cursor's hash sees it: equal filters, equal text. */
export function scheduleFilterText(filter: ScheduleFilter): string {
  // The name only when given, so a cursor issued before the field existed stays valid.
  const parts = ['schedules', filter.type ?? null, filter.group ?? null];
  return JSON.stringify(filter.name === undefined ? parts : [...parts, filter.name]);
}

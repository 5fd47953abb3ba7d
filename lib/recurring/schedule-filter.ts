import { InvalidQueryError } from '../errors/query.errors';
import type { JobState } from '../job.types';
import { isPlainObject, jobStates } from '../query/job-filter';
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
  /**
   * Schedules whose last enqueued slot's job is in this state, or one of these: `'failed'` lists
   * the schedules failing now. One that has not fired yet, or whose last job is gone (removed, or
   * taken by retention), is not listed. `triggerSchedule` runs are not slots and do not count.
   */
  lastRunState?: JobState | readonly JobState[];
}

/** A filter as findSchedules reads it: `lastRunState` as a sorted list. */
export interface NormalizedScheduleFilter extends Omit<ScheduleFilter, 'lastRunState'> {
  lastRunState?: JobState[];
}

export interface FindSchedulesResult {
  /** By name, in the database's order for text. */
  schedules: ScheduleView[];
  /** Pass as `cursor` for the next page; null when there is nothing more. */
  nextCursor: string | null;
}

const FIELDS = ['name', 'type', 'group', 'lastRunState'] as const;

/** Validates a schedule filter (pure); throws `InvalidQueryError` naming the bad field. */
export function normalizeScheduleFilter(raw: unknown): NormalizedScheduleFilter {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) throw new InvalidQueryError('filter', `a plain object { ${FIELDS.join('?, ')}? }`, raw);
  const out: NormalizedScheduleFilter = {};
  for (const field of Object.keys(raw)) {
    if (!(FIELDS as readonly string[]).includes(field)) throw new InvalidQueryError(`filter.${field}`, `one of the known fields (${FIELDS.join(', ')})`, field);
    const value = raw[field];
    if (value === undefined) continue;
    if (field === 'lastRunState') {
      out.lastRunState = jobStates(value, field);
      continue;
    }
    const max = field === 'name' ? MAX_SCHEDULE_NAME_LENGTH : 200;
    if (typeof value !== 'string' || !value || value.length > max || !isStorableText(value)) {
      throw new InvalidQueryError(field, `a non-empty string of at most ${max} characters ${STORABLE_TEXT}`, value);
    }
    out[field as 'name' | 'type' | 'group'] = value;
  }
  return out;
}

/** The filter as the cursor's hash sees it: equal filters, equal text. */
export function scheduleFilterText(filter: NormalizedScheduleFilter): string {
  // Later fields only when given, so a cursor issued before they existed stays valid.
  const parts: unknown[] = ['schedules', filter.type ?? null, filter.group ?? null];
  if (filter.name !== undefined || filter.lastRunState !== undefined) parts.push(filter.name ?? null);
  if (filter.lastRunState !== undefined) parts.push(filter.lastRunState);
  return JSON.stringify(parts);
}

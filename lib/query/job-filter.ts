import { InvalidQueryError } from '../errors/query.errors';
import { JOB_STATES, type JobState, type JobView } from '../job.types';
import { normalizeArgsContains, type JsonObject } from './args-filter';
import { isStorableText, STORABLE_TEXT } from '../options/storable-text';
import { isStorableTime, STORABLE_TIME } from '../options/storable-time';
import { isScheduleName, MAX_SCHEDULE_NAME_LENGTH } from '../recurring/schedule-definition';

/**
 * What `find`, `retryMany` and `cancelMany` select. Every field is optional; given fields are
 * combined with AND.
 */
export interface JobFilter {
  /** One state or a list (any of them). */
  state?: JobState | readonly JobState[];
  /** One type or a list (any of them). */
  type?: string | readonly string[];
  group?: string;
  /** Children of this container. */
  parentId?: number;
  /** The job enqueued with this deduplication key. */
  key?: string;
  /** Every path/value given must be present in `args` (PostgreSQL's `@>`); arrays hold scalars only. */
  argsContains?: Record<string, unknown>;
  /** Case-sensitive substring of `lastError`. */
  errorContains?: string;
  /** `createdAt >= createdAfter` (a Date or an ISO 8601 string). */
  createdAfter?: Date | string;
  /** `createdAt < createdBefore` (a Date or an ISO 8601 string). */
  createdBefore?: Date | string;
  /**
   * The jobs this worker holds now (leased or running under its `workerId`, as the dashboard's
   * workers card and `lease_owner` show it); a finished or handed-back job is held by no one.
   */
  worker?: string;
  /**
   * The jobs a recurring schedule enqueued for its slots (keyed `recurring:<name>:<slot>`); not
   * its `triggerSchedule` runs, which have no key.
   */
  schedule?: string;
}

export interface FindOptions {
  /** Jobs per page, 1–500. Default 50. */
  limit?: number;
  /** `nextCursor` of the previous page of the same filter. */
  cursor?: string | null;
}

export interface FindResult<TArgs = unknown, TResult = unknown> {
  /** Newest first (highest id first). */
  jobs: JobView<TArgs, TResult>[];
  /** Pass as `cursor` for the next page; null when there is nothing more. */
  nextCursor: string | null;
}

/** The validated filter: lists deduplicated and sorted, dates parsed. */
export interface NormalizedFilter {
  states?: JobState[];
  types?: string[];
  group?: string;
  parentId?: number;
  key?: string;
  argsContains?: JsonObject;
  errorContains?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  worker?: string;
  schedule?: string;
}

export const FILTER_FIELDS = ['state', 'type', 'group', 'parentId', 'key', 'argsContains', 'errorContains', 'createdAfter', 'createdBefore', 'worker', 'schedule'] as const;
export const MAX_PAGE = 500;
export const DEFAULT_PAGE = 50;
const MAX_LIST = 100;

/** Validates a filter (pure). Throws `InvalidQueryError` naming the first bad field. */
export function normalizeFilter(raw: unknown): NormalizedFilter {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) throw new InvalidQueryError('filter', 'a plain object', raw);
  for (const field of Object.keys(raw)) {
    if (!(FILTER_FIELDS as readonly string[]).includes(field)) {
      throw new InvalidQueryError(`filter.${field}`, `one of the known fields (${FILTER_FIELDS.join(', ')})`, field);
    }
  }
  const f = raw as Record<string, unknown>;
  const out: NormalizedFilter = {};
  if (f.state !== undefined) {
    out.states = jobStates(f.state, 'state');
  }
  if (f.type !== undefined) out.types = list(f.type, 'type', `a non-empty string of at most 200 characters ${STORABLE_TEXT}, or a non-empty list of them`, (s) => text(s, 200));
  if (f.group !== undefined) out.group = one(f.group, 'group', 200);
  if (f.key !== undefined) out.key = one(f.key, 'key', 255);
  if (f.errorContains !== undefined) out.errorContains = one(f.errorContains, 'errorContains', 1_000);
  // 128: the workerId option's bound (and lease_owner's width).
  if (f.worker !== undefined) out.worker = one(f.worker, 'worker', 128);
  if (f.schedule !== undefined) {
    if (!isScheduleName(f.schedule)) {
      throw new InvalidQueryError('schedule', `a schedule name: 1–${MAX_SCHEDULE_NAME_LENGTH} characters of A-Z a-z 0-9 _ . : -`, f.schedule);
    }
    out.schedule = f.schedule;
  }
  if (f.parentId !== undefined) {
    if (typeof f.parentId !== 'number' || !Number.isSafeInteger(f.parentId) || f.parentId <= 0) {
      throw new InvalidQueryError('parentId', 'a positive integer', f.parentId);
    }
    out.parentId = f.parentId;
  }
  if (f.argsContains !== undefined) out.argsContains = normalizeArgsContains(f.argsContains);
  if (f.createdAfter !== undefined) out.createdAfter = date(f.createdAfter, 'createdAfter');
  if (f.createdBefore !== undefined) out.createdBefore = date(f.createdBefore, 'createdBefore');
  return out;
}

/**
 * True when the filter narrows the jobs at all. An empty filter, or one whose only condition is
 * `argsContains: {}` (every args object contains the empty one), selects every job.
 */
export function narrowsJobs(f: NormalizedFilter): boolean {
  return Object.entries(f).some(([field, value]) => value !== undefined && !(field === 'argsContains' && Object.keys(value as object).length === 0));
}

/** Validates `{ limit, cursor }` apart from the cursor's content (see decodeCursor). */
export function normalizePageOptions(raw: unknown): { limit: number; cursor: string | null } {
  if (raw === undefined || raw === null) return { limit: DEFAULT_PAGE, cursor: null };
  if (!isPlainObject(raw)) throw new InvalidQueryError('options', 'a plain object { limit, cursor }', raw);
  const o = raw as Record<string, unknown>;
  for (const field of Object.keys(o)) {
    if (field !== 'limit' && field !== 'cursor') throw new InvalidQueryError(`options.${field}`, 'one of limit, cursor', field);
  }
  const limit = o.limit ?? DEFAULT_PAGE;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new InvalidQueryError('limit', `an integer from 1 to ${MAX_PAGE}`, limit);
  }
  const cursor = o.cursor ?? null;
  if (cursor !== null && typeof cursor !== 'string') throw new InvalidQueryError('cursor', 'a string from nextCursor, or null', cursor);
  return { limit, cursor };
}

/** A stable text form of the filter: equal filters, equal text (the cursor carries its hash). */
export function canonicalFilter(filter: NormalizedFilter): string {
  const keys = Object.keys(filter).sort() as Array<keyof NormalizedFilter>;
  return JSON.stringify(keys.map((k) => [k, canonicalValue(filter[k])]));
}

function canonicalValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(canonicalValue);
  if (value && typeof value === 'object') {
    return Object.keys(value).sort().map((k) => [k, canonicalValue((value as Record<string, unknown>)[k])]);
  }
  return value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function text(value: unknown, max: number): boolean {
  return typeof value === 'string' && value.length > 0 && value.length <= max && isStorableText(value);
}

function one(value: unknown, field: string, max: number): string {
  if (!text(value, max)) throw new InvalidQueryError(field, `a non-empty string of at most ${max} characters ${STORABLE_TEXT}`, value);
  return value as string;
}

/** A state or a non-empty list of them (pure), as a sorted list without repeats; else `InvalidQueryError` naming `field`. */
export function jobStates(value: unknown, field: string): JobState[] {
  return list(value, field, `one of ${JOB_STATES.join(', ')}, or a non-empty list of them`, (s) => JOB_STATES.includes(s as JobState)) as JobState[];
}

function list(value: unknown, field: string, expected: string, valid: (item: unknown) => boolean): string[] {
  const items = Array.isArray(value) ? value : [value];
  if (!items.length || items.length > MAX_LIST) throw new InvalidQueryError(field, `${expected} (at most ${MAX_LIST})`, value);
  for (const item of items) if (!valid(item)) throw new InvalidQueryError(field, expected, item);
  return [...new Set(items as string[])].sort();
}

function date(value: unknown, field: string): Date {
  const d = value instanceof Date ? value : typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : undefined;
  if (!d || isNaN(d.getTime()) || !isStorableTime(d)) throw new InvalidQueryError(field, `a valid Date or ISO 8601 string ${STORABLE_TIME}`, value);
  return d;
}

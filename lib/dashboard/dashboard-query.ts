import { InvalidQueryError } from '../errors/query.errors';
import { JOB_LOG_LEVELS, type JobLogLevel } from '../logs/job-log.types';
import type { JobState } from '../job.types';
import type { JobFilter } from '../query/job-filter';
import type { RescheduleInput } from '../query/reschedule-input';
import type { ScheduleFilter } from '../recurring/schedule-filter';

/** Rows per page of the jobs table; find() allows more, the browser never needs them. */
export const MAX_DASHBOARD_PAGE = 100;
const MAX_ARGS_FILTER = 4_096;
/**
 * Log lines per page of the job page's log: 200 lines of at most 2,000 characters each keep a
 * response under about 400,000 characters, however long the job logged.
 */
export const MAX_DASHBOARD_LOG_PAGE = 200;

export interface DashboardJobsQuery {
  filter: JobFilter;
  limit: number;
  cursor: string | null;
}

/**
 * The jobs table's query string (or an action's body) → a find() filter (pure). Fields:
 * `state` (comma list), `type`, `group`, `parent`, `worker`, `schedule`, `error`, `after`/`before` (ISO 8601),
 * `args` (a JSON object, argsContains), `limit` (1–100), `cursor`. Empty fields are ignored;
 * everything else is validated by find() itself and answered with InvalidQueryError (400).
 */
export function parseJobsQuery(raw: Record<string, unknown> | null | undefined): DashboardJobsQuery {
  const field = fieldReader(raw);
  const filter: JobFilter = {};
  const state = field('state');
  if (state) filter.state = state.split(',').map((s) => s.trim()).filter(Boolean) as JobFilter['state'];
  const type = field('type');
  if (type) filter.type = type;
  const group = field('group');
  if (group) filter.group = group;
  const error = field('error');
  if (error) filter.errorContains = error;
  const after = field('after');
  if (after) filter.createdAfter = after;
  const before = field('before');
  if (before) filter.createdBefore = before;
  const parent = field('parent');
  if (parent) filter.parentId = positiveInt(parent, 'parent');
  const worker = field('worker');
  if (worker) filter.worker = worker;
  const schedule = field('schedule');
  if (schedule) filter.schedule = schedule;
  const args = field('args');
  if (args) {
    if (args.length > MAX_ARGS_FILTER) throw new InvalidQueryError('args', `JSON of at most ${MAX_ARGS_FILTER} characters`, `${args.length} characters`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      throw new InvalidQueryError('args', 'a JSON object such as {"tenant":"acme"}', args.slice(0, 100));
    }
    filter.argsContains = parsed as Record<string, unknown>;
  }
  return { filter, limit: pageLimit(field('limit')), cursor: field('cursor') ?? null };
}

/**
 * The schedules table's query string (pure): `name`, `type`, `group`, `lastRun` (a comma list of
 * states: findSchedules' lastRunState), `limit` (1–100), `cursor`; findSchedules validates the rest.
 */
export function parseSchedulesQuery(raw: Record<string, unknown> | null | undefined): { filter: ScheduleFilter; limit: number; cursor: string | null } {
  const field = fieldReader(raw);
  const filter: ScheduleFilter = {};
  const name = field('name');
  if (name) filter.name = name;
  const type = field('type');
  if (type) filter.type = type;
  const group = field('group');
  if (group) filter.group = group;
  const lastRun = field('lastRun');
  if (lastRun) filter.lastRunState = lastRun.split(',').map((s) => s.trim()).filter(Boolean) as JobState[];
  return { filter, limit: pageLimit(field('limit')), cursor: field('cursor') ?? null };
}

export interface DashboardLogsQuery {
  attempt?: number;
  level?: JobLogLevel;
  limit: number;
  cursor?: string;
}

/**
 * The job log's query string (pure): `attempt` (a positive integer), `level` (`info` or `error`),
 * `limit` (1–200, default 200), `cursor`. getLogs validates the cursor itself (a forged one is
 * InvalidCursorError, 400).
 */
export function parseLogsQuery(raw: Record<string, unknown> | null | undefined): DashboardLogsQuery {
  const field = fieldReader(raw);
  const query: DashboardLogsQuery = { limit: pageLimit(field('limit'), MAX_DASHBOARD_LOG_PAGE, MAX_DASHBOARD_LOG_PAGE) };
  const attempt = field('attempt');
  if (attempt) query.attempt = positiveInt(attempt, 'attempt');
  const level = field('level');
  if (level) {
    if (!JOB_LOG_LEVELS.includes(level as JobLogLevel)) throw new InvalidQueryError('level', `one of ${JOB_LOG_LEVELS.join(', ')}`, level);
    query.level = level as JobLogLevel;
  }
  const cursor = field('cursor');
  if (cursor) query.cursor = cursor;
  return query;
}

/** Reads one query-string field: absent or empty is undefined, a repeated one (an array) is refused. */
function fieldReader(raw: Record<string, unknown> | null | undefined): (name: string) => string | undefined {
  const q = raw ?? {};
  return (name) => {
    const v = q[name];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw new InvalidQueryError(name, 'a single string', v);
    return v;
  };
}

function pageLimit(text: string | undefined, max = MAX_DASHBOARD_PAGE, fallback = 50): number {
  const limit = text === undefined ? fallback : positiveInt(text, 'limit');
  if (limit > max) throw new InvalidQueryError('limit', `an integer from 1 to ${max}`, limit);
  return limit;
}

/** An id from a URL segment (pure). */
export function positiveInt(text: unknown, name: string): number {
  const n = typeof text === 'string' && /^[1-9]\d{0,15}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidQueryError(name, 'a positive integer', text);
  return n;
}

/** An ISO 8601 time with its zone, as the page sends it (`Date.prototype.toISOString`, or an offset). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Whether the date and time written exist: V8 reads 30 February as 2 March. */
function isCalendarTime(text: string): boolean {
  const [y, mo, d, h, mi, sec = 0] = (text.match(/^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/) ?? []).slice(1).filter((v) => v !== undefined).map(Number);
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, sec));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && h < 24 && mi < 60 && sec < 60 && !isNaN(Date.parse(text));
}

/**
 * A reschedule's body (JSON) → `reschedule()`'s input (pure): `runAfter` as an ISO 8601 time with
 * its zone becomes a Date; the rest, but the fields in `besides` (a bulk action's `filter`), is
 * checked by `reschedule()` itself.
 */
export function parseRescheduleBody(body: unknown, besides: readonly string[] = []): RescheduleInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidQueryError('body', 'a JSON object { runAfter?, priority? }', body);
  const { runAfter, ...all } = body as Record<string, unknown>;
  const rest = Object.fromEntries(Object.entries(all).filter(([k]) => !besides.includes(k)));
  if (runAfter === undefined) return rest as RescheduleInput;
  if (typeof runAfter !== 'string' || !ISO_TIME.test(runAfter) || !isCalendarTime(runAfter)) {
    throw new InvalidQueryError('runAfter', 'an ISO 8601 time with its zone, e.g. 2026-12-24T18:00:00Z', runAfter);
  }
  return { ...rest, runAfter: new Date(runAfter) } as RescheduleInput;
}

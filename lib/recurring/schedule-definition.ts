import { CronTime } from 'cron';
import { InvalidScheduleError } from '../errors';
import { MAX_GROUP_LENGTH, MAX_KEY_LENGTH, MAX_TYPE_LENGTH } from '../enqueue/normalize-job';

/** How many missed slots to enqueue after downtime: none, the latest one, or the latest N. */
export type Backfill = 'none' | 'last' | number;

/** What `queue.schedule()` takes; `@Recurring` builds the same from its arguments. */
export interface ScheduleInput {
  /** Unique name of the schedule; it also names the jobs' keys (`recurring:<name>:<slot ISO>`). */
  name: string;
  /** 5-field (minute) or 6-field (second) cron expression, as the `cron` package reads it. */
  cron: string;
  /** Job type enqueued at each slot. `@Recurring`: the schedule's name. */
  type: string;
  /** Extra args merged into each job's `{ slot }`. */
  args?: Record<string, unknown>;
  /** IANA time zone the cron expression is read in (DST handled by `cron`). Default UTC. */
  timeZone?: string;
  /** After downtime: `'none'` (default), `'last'`, or the latest N missed slots (1–1000). */
  backfill?: Backfill;
  /** A slot enqueued at most this late is on time, not missed. Default 10 000 ms. */
  misfireGraceMs?: number;
  maxAttempts?: number;
  timeoutMs?: number;
  group?: string;
  priority?: number;
}

/** A checked schedule; `options` are the job fields stored as JSON. */
export interface ScheduleDefinition {
  name: string;
  cron: string;
  type: string;
  args: Record<string, unknown>;
  timeZone: string;
  backfill: Backfill;
  misfireGraceMs: number;
  job: { maxAttempts?: number; timeoutMs?: number; group?: string; priority?: number };
}

export const DEFAULT_MISFIRE_GRACE_MS = 10_000;
export const MAX_BACKFILL = 1_000;
/** Room for `recurring:` + name + `:` + a 24-character ISO slot in the 255-character key. */
export const MAX_SCHEDULE_NAME_LENGTH = MAX_KEY_LENGTH - 'recurring:'.length - 1 - 24;

/** Whether `name` is one a schedule can have: anything else names none, and is never sent to the database (a NUL is an error there). */
export function isScheduleName(name: unknown): name is string {
  return typeof name === 'string' && name.length <= MAX_SCHEDULE_NAME_LENGTH && /^[A-Za-z0-9_.:-]+$/.test(name);
}

/** Checks a schedule (cron and time zone through the `cron` library, which also finds its next slot). Throws InvalidScheduleError. */
export function defineSchedule(input: ScheduleInput): ScheduleDefinition {
  const rawName = (input as { name?: unknown } | null)?.name;
  const label = typeof rawName === 'string' && rawName ? rawName : '(unnamed)';
  const fail = (reason: string): never => {
    throw new InvalidScheduleError(label, reason);
  };
  if (typeof input !== 'object' || input === null) fail('expected an object { name, cron, type, ... }');
  if (!isScheduleName(rawName)) {
    fail(`name must be 1–${MAX_SCHEDULE_NAME_LENGTH} characters of A-Z a-z 0-9 _ . : -`);
  }
  if (typeof input.type !== 'string' || !input.type || input.type.length > MAX_TYPE_LENGTH) {
    fail(`type must be a non-empty string of at most ${MAX_TYPE_LENGTH} characters`);
  }
  if (typeof input.cron !== 'string' || input.cron.length > 200) fail('cron must be a string');
  const timeZone = input.timeZone ?? 'UTC';
  if (typeof timeZone !== 'string' || !isTimeZone(timeZone)) fail(`unknown time zone ${JSON.stringify(timeZone)}`);
  let cron: CronTime | undefined;
  try {
    cron = new CronTime(input.cron, timeZone);
  } catch (err) {
    fail(`invalid cron expression ${JSON.stringify(input.cron)}: ${(err as Error).message}`);
  }
  try {
    // The parser accepts a date that never comes (30 February); its first slot then threw a bare CronError.
    cron!.getNextDateFrom(new Date(), timeZone);
  } catch {
    fail(`cron expression ${JSON.stringify(input.cron)} never falls due (no slot in the next 8 years)`);
  }
  const backfill = input.backfill ?? 'none';
  if (backfill !== 'none' && backfill !== 'last' && !(Number.isInteger(backfill) && (backfill as number) >= 1 && (backfill as number) <= MAX_BACKFILL)) {
    fail(`backfill must be 'none', 'last' or an integer from 1 to ${MAX_BACKFILL}; received ${JSON.stringify(backfill)}`);
  }
  const grace = input.misfireGraceMs ?? DEFAULT_MISFIRE_GRACE_MS;
  if (!Number.isInteger(grace) || grace < 0 || grace > 86_400_000) fail('misfireGraceMs must be an integer from 0 to 86400000');
  if (input.args !== undefined && (typeof input.args !== 'object' || input.args === null || Array.isArray(input.args))) {
    fail('args must be a plain object (each job gets it with `slot` added)');
  }
  if (input.args && 'slot' in input.args) fail('args must not contain `slot`: the queue sets it');
  if (input.group !== undefined && (typeof input.group !== 'string' || !input.group || input.group.length > MAX_GROUP_LENGTH)) {
    fail(`group must be a non-empty string of at most ${MAX_GROUP_LENGTH} characters`);
  }
  const job: ScheduleDefinition['job'] = {};
  for (const [field, min] of [['maxAttempts', 1], ['timeoutMs', 1], ['priority', 0]] as const) {
    const v = input[field];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < min || v > 2_147_483_647) fail(`${field} must be an integer ≥ ${min}`);
    job[field] = v;
  }
  if (input.group !== undefined) job.group = input.group;
  return {
    name: rawName as string,
    cron: input.cron,
    type: input.type,
    args: input.args ?? {},
    timeZone,
    backfill,
    misfireGraceMs: grace,
    job,
  };
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

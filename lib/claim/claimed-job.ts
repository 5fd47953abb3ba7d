import { sql, type Sql } from '../database/sql';
import type { Row } from '../database/sql-executor';
import { parseJson } from '../database/job-row';
import type { AttemptTrace } from '../instrumentation/job-queue.instrumentation';
import { readStoredCreation, type StoredCreation } from '../instrumentation/stored-trace';

/**
 * A claimed attempt as the worker sees it: what it needs to run the job and route its result,
 * nothing more. The claim returns these instead of whole rows because the hot path reads
 * hundreds per claim: formatting and parsing every column (six of them timestamps) was a
 * third of a no-op job's claim cost. The lease itself is in the database.
 */
export interface ClaimedJob {
  id: number;
  type: string;
  args: unknown;
  /** This attempt's number, counted at claim (1 for the first). */
  attempts: number;
  maxAttempts: number;
  group: string;
  priority: number;
  parentId: number | null;
  timeoutMs: number | null;
  /** Only with an instrumentation registered: the stored carriers this attempt links to, read after the claim. */
  trace?: AttemptTrace;
  /** A traced claim's `trace_context` of the row (absent where the claim statement did not return it). */
  creation?: StoredCreation;
  /**
   * Rate limits only: this process's clock time before which the handler must not start, when a
   * window admitted the job ahead of its reopening (see `admission`). Absent: start at once.
   */
  startAt?: number;
  /**
   * Rate limits only: this process's clock time by which the handler must have started, its
   * window's admission plus the guard; a job that would start later goes back unstarted, since
   * its late start could crowd a sliding window of starts with the next admissions.
   */
  startBy?: number;
  /** `run_after` as the driver returned it (epoch ms, Date or text), parsed only when a lifecycle sink wants the wait. */
  readyAt?: unknown;
}

/** Claim order: higher priority first, then the job due first, then the older (lower) id. A comparator for sort. */
export function inClaimOrder(a: Pick<ClaimedJob, 'priority' | 'id' | 'readyAt'>, b: Pick<ClaimedJob, 'priority' | 'id' | 'readyAt'>): number {
  return b.priority - a.priority || compareDue(a.readyAt, b.readyAt) || a.id - b.id;
}

/**
 * Two `run_after` values as one dialect's driver returned them: epoch ms (PostgreSQL's claim
 * functions), a Date (pg and mysql2 otherwise) or SQLite's fixed-width UTC text, compared without
 * parsing. Values of different kinds (never from one claim) compare equal.
 */
export function compareDue(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  return 0;
}

/** The select list a claim returns, the same on every dialect. */
export const CLAIMED_COLUMNS = sql`id, type, args, attempts, max_attempts, group_key, priority, parent_id, timeout_ms, run_after`;

/**
 * PostgreSQL's claim functions: run_after as epoch milliseconds, because pg parses a timestamptz
 * into a Date on every row (about 2 µs each, on the hot path, used only by the wait metric).
 */
export const PG_CLAIMED_COLUMNS = sql`id, type, args, attempts, max_attempts, group_key, priority, parent_id, timeout_ms,
  (extract(epoch FROM run_after) * 1000)::float8 AS run_after`;

/** The claim's select list plus, for a traced claim, the row's stored trace context. */
export function claimedColumns(request: { withTrace?: boolean }, columns: Sql = CLAIMED_COLUMNS): Sql {
  return request.withTrace ? sql`${columns}, trace_context` : columns;
}

/** Args of this many characters or more stay text until the attempt reads them (see deferArgs). */
export const DEFERRED_ARGS_CHARS = 64 * 1024;

export function toClaimedJob(row: Row): ClaimedJob {
  const text = row.args;
  const defer = typeof text === 'string' && text.length >= DEFERRED_ARGS_CHARS;
  const job: ClaimedJob = {
    id: Number(row.id),
    type: String(row.type),
    args: defer ? null : parseClaimedArgs(text),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    group: String(row.group_key),
    priority: Number(row.priority),
    parentId: row.parent_id == null ? null : Number(row.parent_id),
    timeoutMs: row.timeout_ms == null ? null : Number(row.timeout_ms),
    readyAt: row.run_after,
  };
  if (row.trace_context !== undefined) job.creation = readStoredCreation(row.trace_context);
  if (defer || job.args === UNREADABLE) deferArgs(job, text as string);
  return job;
}

const UNREADABLE = Symbol('unreadable args');

/** Small args are parsed at once; text that is not JSON (written around the queue) is left to its attempt. */
function parseClaimedArgs(text: unknown): unknown {
  try {
    return parseJson(text);
  } catch {
    return UNREADABLE;
  }
}

/**
 * Large args are parsed when the attempt first reads them, not in the claim's turn of the event
 * loop: a claim of 500 jobs with 1 MB args parsed 500 MB in one turn (a 2.5 s stall, with every
 * lease renewal of the process behind it), and prefetched jobs handed back unstarted were parsed
 * for nothing. Args that are not JSON throw there too, so they fail their own attempt instead of
 * the whole claim (whose jobs would stay leased until their leases expired, and be claimed
 * together again). An own enumerable property, so the job reads as before.
 */
function deferArgs(job: ClaimedJob, text: string): void {
  let raw: string | undefined = text;
  let value: unknown;
  Object.defineProperty(job, 'args', {
    enumerable: true,
    configurable: true,
    get() {
      if (raw !== undefined) {
        value = JSON.parse(raw);
        raw = undefined;
      }
      return value;
    },
    set(v: unknown) {
      raw = undefined;
      value = v;
    },
  });
}

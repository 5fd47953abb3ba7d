/** Talks to the dashboard's JSON API: base path, CSRF token and read-only flag come from the page. */
function meta(name: string): string {
  return document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? '';
}

export const BASE = meta('jq-base');
export const READ_ONLY = meta('jq-read-only') === 'true';
const CSRF = meta('jq-csrf');

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${BASE}/api/${path}`, {
    method,
    credentials: 'same-origin',
    headers: method === 'GET' ? { accept: 'application/json' } : { 'content-type': 'application/json', 'x-job-queue-csrf': CSRF },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, String(data.error ?? res.status), String(data.message ?? res.statusText));
  return data as T;
}

export const api = {
  get: <T>(path: string) => send<T>('GET', path),
  post: <T>(path: string, body: unknown = {}) => send<T>('POST', path, body),
};

export type JobState = 'waiting' | 'ready' | 'leased' | 'running' | 'done' | 'failed' | 'cancelled';
export const STATES: JobState[] = ['waiting', 'ready', 'leased', 'running', 'done', 'failed', 'cancelled'];

export interface Bounded {
  text: string;
  truncated: boolean;
  length: number;
}

export interface Overview {
  readOnly: boolean;
  countCap: number;
  counts: Record<JobState, number>;
  groups: Array<{ group: string; ready: number; running: number; weight: number }>;
  groupsPartial: boolean;
  /** Job types with open work or failed jobs, the busiest first; `running` counts leased ones too. */
  types: Array<{ type: string; waiting: number; ready: number; running: number; failed: number; paused: boolean }>;
  /** More types than shown, or counted from a bounded sample of rows. */
  typesPartial: boolean;
  /** `estimated`: a busy minute, extrapolated from a bounded read. */
  throughput: Array<{ minutesAgo: number; done: number; failed: number; estimated: boolean }>;
  oldestReadyAgeMs: number;
  /** Schedules whose last slot's job failed (read every 15 s at most). */
  failingSchedules: number;
  paused: Array<{ type?: string; group?: string }>;
  pausedCount: number;
  workers: Array<{ owner: string; inFlight: number; heartbeatAgeMs: number | null }>;
}

export interface JobRow {
  id: number;
  type: string;
  state: JobState;
  group: string;
  attempts: number;
  maxAttempts: number;
  progress: number;
  stage: string | null;
  isContainer: boolean;
  parentId: number | null;
  createdAt: string;
  finishedAt: string | null;
  args: Bounded;
  error: Bounded | null;
}

export interface ScheduleRow {
  name: string;
  type: string;
  cron: string;
  timeZone: string;
  group: string | null;
  nextRunAt: string;
  lastRunAt: string | null;
  /** The last slot's job; null before the first slot or once that job was removed. */
  lastJob: { id: number; state: JobState } | null;
  /** A removed `@Recurring`: no running process declares it, so it does not fire. */
  dormant: boolean;
  /** An `@Recurring` a running process declares: not removable from here. */
  declared: boolean;
  args: Bounded;
}

export interface JobDetail {
  id: number;
  type: string;
  ref: string | null;
  state: JobState;
  args: Bounded;
  result: Bounded | null;
  error: Bounded | null;
  attempts: number;
  maxAttempts: number;
  /** Runs the handler ended with ctx.snooze (they spent no attempt). */
  snoozes: number;
  progress: number;
  stage: string | null;
  group: string;
  weight: number;
  priority: number;
  parentId: number | null;
  isContainer: boolean;
  key: string | null;
  timeoutMs: number | null;
  runAfter: string;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
  /** The workerId holding it while leased or running, else null. */
  worker: string | null;
  leaseExpiresAt: string | null;
  /** The recurring schedule that enqueued it for a slot, by its key. */
  schedule: string | null;
}

/**
 * A line a handler wrote with `ctx.log()` (level `info`) or the error an attempt failed with
 * (level `error`): `at` is ISO 8601, `message` at most 2,000 characters.
 */
export interface LogLine {
  attempt: number;
  at: string;
  level: 'info' | 'error';
  message: string;
}

/** Oldest line first; `nextCursor` is set when more lines follow. */
export interface LogPage {
  logs: LogLine[];
  nextCursor: string | null;
}

export interface GraphNode {
  id: number;
  type: string;
  ref: string | null;
  state: JobState;
  progress: number;
  stage: string | null;
  parentId: number | null;
  isContainer: boolean;
}

export interface Graph {
  rootId: number;
  truncated: boolean;
  nodes: GraphNode[];
  /** `allowFailure`: the dependent runs however `from` ends (drawn dashed). */
  edges: Array<{ from: number; to: number; allowFailure?: true }>;
}

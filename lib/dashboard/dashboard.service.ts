import { Inject, Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import type { SqlDialect } from '../database/dialects';
import type { Row } from '../database/sql-executor';
import { JobQueueService } from '../job-queue.service';
import { JOB_STATES, type JobState } from '../job.types';
import { graphEdges, walkJobGraph } from '../query/graph-walk';
import { GRAPH_CHUNK } from '../query/job-graph.sql';
import { findPage } from '../query/read-page';
import { boundHead, boundJson, boundText, type BoundedText } from './bounded-text';
import { jobDetailStatement, jobPreviewColumns } from './dashboard-jobs.sql';
import { parseStoredJson, toJobRecord, toJobView } from '../database/job-row';
import { jobsOfKeys, schedulePreviewColumns } from './dashboard-schedules.sql';
import { countFailingSchedules } from '../recurring/last-slot-key.sql';
import { slotKey, slotOfKey } from '../recurring/slot-key';
import { findSchedulePage } from '../recurring/schedule-page';
import { findSchedule } from '../recurring/schedules.sql';
import { isScheduleName } from '../recurring/schedule-definition';
import { ScheduleNotFoundError } from '../errors/schedule.errors';
import { DashboardScheduleDeclaredError } from './dashboard.errors';
import { graphNodeSummaries } from './dashboard-graph.sql';
import { nearestEdges } from './nearest-edges';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { parseJobsQuery, parseLogsQuery, parseSchedulesQuery } from './dashboard-query';
import { readOldestReadyAgeMs } from '../stats/oldest-ready.sql';
import { cappedStateCount, failedByType, groupsInFlight, pausedCount, pausedPreview, pausedTypesAmong, scheduleCount, typesAtWork, workersInFlight } from './dashboard-stats.sql';
import { summarizeTypes, type TypeSummary } from './type-summary';
import { ThroughputHistory } from './throughput-history';
import { toPauseTarget, type PausedEntry } from '../pause/pause-target';
import { SharedSnapshots } from './shared-snapshot';

/** Counts per state stop here ("100,000+"): never a scan of the whole table per refresh. */
export const COUNT_CAP = 100_000;
/** Graph nodes sent to the browser (the nearest to the job, see walkGraph); getGraph itself stops at 10,000. */
export const MAX_DASHBOARD_GRAPH_NODES = 1_000;
/** Graph edges sent to the browser, the nearest kept (see nearestEdges). */
export const MAX_DASHBOARD_GRAPH_EDGES = 5_000;
const GROUP_ROWS_CAP = 50_000;
const MAX_GROUPS = 50;
/**
 * Rows read per refresh for the types card, per state read. Failed rows are scattered over the
 * table, one heap page each: 20,000 of them took 100-127 ms on PostgreSQL (1,000,000 jobs).
 */
const TYPE_ROWS_CAP = 20_000;
const FAILED_TYPE_ROWS_CAP = 10_000;
const MAX_TYPES = 50;
const MAX_WORKERS = 100;
const MAX_PAUSED = 200;
const THROUGHPUT_MINUTES = 60;
/**
 * The chart has one bar per minute, so it is recomputed at most every 15 s: on a busy table its
 * query reads every job finished in the last hour (about 1-3 s at a million per hour, measured),
 * while the rest of the overview stays cheap enough to refresh every second.
 */
const THROUGHPUT_TTL_MS = 15_000;
/** The failing schedules' count walks every schedule (10,000: 11-41 ms by dialect): read this often at most. */
const FAILING_SCHEDULES_TTL_MS = 15_000;
/** Characters of args, result and error on the job page; table cells get far fewer. */
export const MAX_FIELD_CHARS = 64 * 1024;
const PREVIEW_CHARS = 160;
const SHORT_CHARS = 200;

export interface OverviewView {
  readOnly: boolean;
  countCap: number;
  counts: Record<JobState, number>;
  groups: Array<{ group: string; ready: number; running: number; weight: number }>;
  /** More groups or rows than shown. */
  groupsPartial: boolean;
  /** Job types with open work or failed jobs, the busiest first. */
  types: TypeSummary[];
  /** More types than shown, or counted from a bounded sample of rows. */
  typesPartial: boolean;
  /** Per minute, oldest first (index 0 = 59 minutes ago, index 59 = this minute); `estimated`: more finished than one bounded read takes, extrapolated. */
  throughput: Array<{ minutesAgo: number; done: number; failed: number; estimated: boolean }>;
  oldestReadyAgeMs: number;
  /** The first MAX_PAUSED entries; `pausedCount` counts them all. */
  paused: Array<{ type?: string; group?: string }>;
  pausedCount: number;
  /** Schedules whose last slot's job failed (findSchedules({ lastRunState: 'failed' })), at most FAILING_SCHEDULES_TTL_MS old. */
  failingSchedules: number;
  workers: Array<{ owner: string; inFlight: number; heartbeatAgeMs: number | null }>;
}

export interface JobRowView {
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
  createdAt: Date;
  finishedAt: Date | null;
  args: BoundedText;
  error: BoundedText | null;
}

export interface ScheduleRowView {
  name: string;
  type: string;
  cron: string;
  timeZone: string;
  group: string | null;
  nextRunAt: Date;
  lastRunAt: Date | null;
  /**
   * The job of the last slot, by its key; null before the first slot, or when that job was
   * removed (by `remove`, `removeMany`, or retention deleting or archiving it).
   */
  lastJob: { id: number; state: JobState } | null;
  /** An `@Recurring` schedule that no running process declares any more: it does not fire. */
  dormant: boolean;
  /** An `@Recurring` schedule that a running process declares: the dashboard does not remove it. */
  declared: boolean;
  args: BoundedText;
}

/** A job log line as the page gets it: `at` as ISO 8601 text, `message` as stored (at most 2,000 characters). */
export interface LogLineView {
  attempt: number;
  at: string;
  message: string;
}

export interface GraphNodeView {
  id: number;
  type: string;
  ref: string | null;
  state: JobState;
  progress: number;
  stage: string | null;
  parentId: number | null;
  isContainer: boolean;
}

/** The dashboard's reads: bounded views over the query API, shared between open pages. */
@Injectable()
export class DashboardService {
  private readonly overviews: SharedSnapshots<OverviewView>;
  private readonly throughputs: SharedSnapshots<OverviewView['throughput']>;
  private readonly failing: SharedSnapshots<number>;
  private readonly throughputHistory = new ThroughputHistory(THROUGHPUT_MINUTES);
  private readonly graphs: SharedSnapshots<unknown>;

  constructor(
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    private readonly queue: JobQueueService,
    private readonly db: JobQueueDatabase,
  ) {
    this.overviews = new SharedSnapshots(options.snapshotTtlMs, 1);
    this.throughputs = new SharedSnapshots(Math.max(options.snapshotTtlMs, THROUGHPUT_TTL_MS), 1);
    this.failing = new SharedSnapshots(Math.max(options.snapshotTtlMs, FAILING_SCHEDULES_TTL_MS), 1);
    this.graphs = new SharedSnapshots(options.snapshotTtlMs, 100);
  }

  overview(): Promise<OverviewView> {
    return this.overviews.get('overview', () => this.readOverview());
  }

  /**
   * A page of the jobs table: find()'s filter, pages and cursors, reading only the start of args
   * and error. Whole rows cost 2.2 s and 255 MB for 50 jobs of 2 MB args, to send 22 KB.
   */
  async jobs(query: Record<string, unknown>): Promise<{ jobs: JobRowView[]; nextCursor: string | null }> {
    const { filter, limit, cursor } = parseJobsQuery(query);
    const page = await findPage(this.db, filter, { limit, cursor }, jobPreviewColumns(this.db.dialect, PREVIEW_CHARS + 1));
    return { jobs: page.rows.map((r) => toRow(r, this.db.dialect)), nextCursor: page.nextCursor };
  }

  /** A page of recurring schedules by name, and how many there are in all. */
  async schedules(query: Record<string, unknown>): Promise<{ schedules: ScheduleRowView[]; nextCursor: string | null; count: number }> {
    const { filter, limit, cursor } = parseSchedulesQuery(query);
    const page = await findSchedulePage(this.db, filter, { limit, cursor }, schedulePreviewColumns(this.db.dialect, PREVIEW_CHARS + 1));
    const count = Number((await this.db.run(scheduleCount())).rows[0]?.n ?? 0);
    const schedules = page.rows.map((r) => toScheduleRow(r, this.db.dialect));
    const keys = schedules.flatMap((s) => (s.lastRunAt === null ? [] : [slotKey(s.name, s.lastRunAt)]));
    const jobs = new Map<string, ScheduleRowView['lastJob']>();
    if (keys.length) for (const r of (await this.db.run(jobsOfKeys(keys))).rows) jobs.set(String(r.job_key), { id: Number(r.id), state: r.state as JobState });
    for (const s of schedules) s.lastJob = s.lastRunAt === null ? null : (jobs.get(slotKey(s.name, s.lastRunAt)) ?? null);
    return { schedules, nextCursor: page.nextCursor, count };
  }

  /**
   * A job's fields, its args and result as indented JSON and its error, each at most
   * MAX_FIELD_CHARS. Values longer than that are read only as far as they are shown and sent
   * as their stored (compact) JSON, cut: reading them whole cost 200 ms and 17 MB a refresh for a
   * 16 MB result on PostgreSQL, every 2 s while the page is open.
   */
  async job(id: number): Promise<Record<string, unknown> | null> {
    const d = this.db.dialect;
    const { rows: [row] } = await this.db.run(jobDetailStatement(d, id, MAX_FIELD_CHARS + 1));
    if (!row) return null;
    const whole = (column: string) => row[column] == null || Number(row[`${column}_length`]) <= MAX_FIELD_CHARS;
    const json = (column: string) =>
      whole(column) ? boundJson(parseStoredJson(row[column]), MAX_FIELD_CHARS) : boundHead(String(row[column]), Number(row[`${column}_length`]), MAX_FIELD_CHARS);
    const record = toJobRecord({ ...row, args: null, result: null, last_error: null }, d);
    const { args: _args, result: _result, lastError: _error, currentStage, ...fields } = toJobView(record);
    return {
      ...fields,
      // Who holds it while leased or running (the workerId), and until when unless renewed.
      worker: record.leaseOwner,
      leaseExpiresAt: record.leaseExpires,
      // The schedule that enqueued it for a slot (its key says which); null for other jobs.
      schedule: slotOfKey(record.key)?.name ?? null,
      stage: stageText(currentStage),
      args: json('args'),
      result: row.result == null ? null : json('result'),
      error: row.last_error == null ? null : boundHead(String(row.last_error), Number(row.last_error_length), MAX_FIELD_CHARS),
    };
  }

  /**
   * A page of the job's log, oldest line first, through getLogs (its order, cursor and typed
   * errors: an unknown job is JobNotFoundError, a forged cursor InvalidCursorError). Not shared
   * between pages like the overview: each reader pages on its own.
   */
  async logs(id: number, query: Record<string, unknown>): Promise<{ logs: LogLineView[]; nextCursor: string | null }> {
    const page = await this.queue.getLogs(id, parseLogsQuery(query));
    return {
      logs: page.logs.map((line) => ({ attempt: line.attempt, at: line.at.toISOString(), level: line.level, message: line.message })),
      nextCursor: page.nextCursor,
    };
  }

  graph(id: number): Promise<unknown> {
    return this.graphs.get(String(id), () => this.readGraph(id));
  }

  /**
   * What is paused, bounded: tenants may pause thousands of groups, and the overview (every
   * second) and each pause/resume answer would otherwise read and send every entry.
   */
  async paused(): Promise<{ paused: OverviewView['paused']; pausedCount: number }> {
    const { rows } = await this.db.run(pausedPreview(MAX_PAUSED));
    const total = rows.length < MAX_PAUSED ? rows.length : Number((await this.db.run(pausedCount())).rows[0]?.n ?? 0);
    return {
      paused: rows.map((r) => toPauseTarget({ kind: r.kind as PausedEntry['kind'], name: String(r.name) })),
      pausedCount: Math.max(total, rows.length),
    };
  }

  /**
   * Removes a schedule made by `schedule()`, or an `@Recurring` one no running process declares
   * (dormant): one still declared would be stored again at its process's next start.
   */
  async removeSchedule(name: string): Promise<{ name: string; removed: true }> {
    const stored = isScheduleName(name) ? await findSchedule(this.db, name) : null;
    if (!stored) throw new ScheduleNotFoundError(name);
    if (stored.declaredUntil && stored.declaredUntil.getTime() > Date.now()) throw new DashboardScheduleDeclaredError(name);
    if (!(await this.queue.unschedule(name))) throw new ScheduleNotFoundError(name);
    this.invalidate();
    return { name, removed: true };
  }

  /** After an action: the next read shows its effect instead of a shared snapshot. */
  invalidate(): void {
    this.overviews.clear();
    this.graphs.clear(); // the chart is history: an action does not change it
  }

  /** A bulk action's filter; one without a condition is refused by retryMany/cancelMany/removeMany themselves. */
  bulkFilter(body: unknown) {
    return parseJobsQuery(body && typeof body === 'object' ? ((body as Record<string, unknown>).filter as Record<string, unknown>) : undefined).filter;
  }

  /**
   * The graph page's view: the walk's nearest ids, then only what is drawn of them. Cutting
   * getGraph's result instead read and parsed every row of up to 10,000 (2.8 s and 150 MB for
   * jobs of 20 KB args, to send 1,000 boxes; 10 GB at the 1 MB args a job may hold) and
   * kept the nearest ids, which beside a 50,000-way fan-in left out the job's own dependent:
   * 1,000 boxes and no edge.
   */
  private async readGraph(id: number) {
    const { ids, truncated } = await walkJobGraph(this.db, id, MAX_DASHBOARD_GRAPH_NODES);
    const nodes: GraphNodeView[] = [];
    for (let i = 0; i < ids.length; i += GRAPH_CHUNK) {
      const { rows } = await this.db.run(graphNodeSummaries(ids.slice(i, i + GRAPH_CHUNK)));
      for (const r of rows) nodes.push(toGraphNode(r));
    }
    // By id: the page lays the graph out again only when its nodes or edges change, order included.
    nodes.sort((a, b) => a.id - b.id);
    const present = new Set(nodes.map((n) => n.id));
    const edges = nearestEdges(await graphEdges(this.db, ids, present), ids, MAX_DASHBOARD_GRAPH_EDGES);
    return {
      rootId: id,
      truncated: truncated || edges.cut,
      nodes: nodes.map((n) => (n.parentId !== null && !present.has(n.parentId) ? { ...n, parentId: null } : n)),
      edges: edges.edges,
    };
  }

  /** The types card: per type, open work and failed jobs from bounded reads, and which are paused. */
  private async types(): Promise<{ types: TypeSummary[]; partial: boolean }> {
    const open = (await this.db.run(typesAtWork(TYPE_ROWS_CAP))).rows;
    const failed = (await this.db.run(failedByType(FAILED_TYPE_ROWS_CAP))).rows;
    const openCapped = ['waiting', 'ready', 'leased', 'running'].some((state) => countOf(open, state) >= TYPE_ROWS_CAP);
    const failedCapped = failed.reduce((n, r) => n + Number(r.n), 0) >= FAILED_TYPE_ROWS_CAP;
    const { types, partial } = summarizeTypes(open, failed, MAX_TYPES, { open: openCapped, failed: failedCapped });
    const paused = types.length ? new Set((await this.db.run(pausedTypesAmong(types.map((t) => t.type)))).rows.map((r) => String(r.name))) : new Set<string>();
    return { types: types.map((t) => ({ ...t, paused: paused.has(t.type) })), partial };
  }

  private async readOverview(): Promise<OverviewView> {
    const d = this.db.dialect;
    const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
    // One statement at a time: SQLite serializes anyway, and a pool is left for the workers.
    for (const state of JOB_STATES) counts[state] = Number((await this.db.run(cappedStateCount(state, COUNT_CAP))).rows[0]?.n ?? 0);
    const groupRows = (await this.db.run(groupsInFlight(GROUP_ROWS_CAP))).rows;
    const types = await this.types();
    const throughput = await this.throughputs.get('throughput', () => this.throughputHistory.read(this.db));
    const workerRows = (await this.db.run(workersInFlight(d, MAX_WORKERS))).rows;
    const oldest = await readOldestReadyAgeMs(this.db);
    const { paused, pausedCount } = await this.paused();
    const failingSchedules = await this.failing.get('failing', () => countFailingSchedules(this.db));

    const groups = new Map<string, OverviewView['groups'][number]>();
    for (const r of groupRows) {
      const name = String(r.group_key);
      const g = groups.get(name) ?? { group: name, ready: 0, running: 0, weight: 1 };
      if (r.state === 'ready') g.ready += Number(r.n);
      else g.running += Number(r.n);
      g.weight = Math.max(g.weight, Number(r.weight));
      groups.set(name, g);
    }
    const sortedGroups = [...groups.values()].sort((a, b) => b.ready + b.running - (a.ready + a.running) || a.group.localeCompare(b.group));
    return {
      readOnly: this.options.readOnly,
      countCap: COUNT_CAP,
      counts,
      groups: sortedGroups.slice(0, MAX_GROUPS),
      groupsPartial: sortedGroups.length > MAX_GROUPS || ['ready', 'leased', 'running'].some((state) => countOf(groupRows, state) >= GROUP_ROWS_CAP),
      types: types.types,
      typesPartial: types.partial,
      throughput,
      oldestReadyAgeMs: Math.max(0, Math.round(oldest)),
      paused,
      pausedCount,
      failingSchedules,
      workers: workerRows.map((r) => ({
        owner: String(r.lease_owner),
        inFlight: Number(r.n),
        heartbeatAgeMs: r.heartbeat_age == null ? null : Math.max(0, Math.round(Number(r.heartbeat_age))),
      })),
    };
  }
}

/** The rows' `n` summed over those of `state` (a read capped per state stopped at its cap when this reaches it). */
function countOf(rows: readonly Row[], state: string): number {
  return rows.reduce((n, r) => n + (r.state === state ? Number(r.n) : 0), 0);
}

function stageText(stage: string | null): string | null {
  return stage === null ? null : boundText(stage, SHORT_CHARS).text;
}

function toRow(r: Row, d: SqlDialect): JobRowView {
  return {
    id: Number(r.id),
    type: String(r.type),
    state: r.state as JobState,
    group: String(r.group_key),
    attempts: Number(r.attempts),
    maxAttempts: Number(r.max_attempts),
    progress: Number(r.progress),
    stage: stageText((r.current_stage as string | null) ?? null),
    isContainer: Number(r.is_container) === 1,
    parentId: r.parent_id == null ? null : Number(r.parent_id),
    createdAt: d.parseTime(r.created_at)!,
    finishedAt: d.parseTime(r.finished_at),
    args: boundHead(String(r.args_head), Number(r.args_length), PREVIEW_CHARS),
    error: r.error_head == null ? null : boundHead(String(r.error_head), Number(r.error_length), PREVIEW_CHARS),
  };
}

function toScheduleRow(r: Row, d: SqlDialect): ScheduleRowView {
  const declaredUntil = d.parseTime(r.declared_until);
  const dormant = declaredUntil !== null && declaredUntil.getTime() <= Date.now();
  return {
    name: String(r.name),
    type: String(r.job_type),
    cron: boundText(String(r.cron), SHORT_CHARS).text,
    timeZone: String(r.time_zone),
    group: (JSON.parse(String(r.job_options)) as { group?: string }).group ?? null,
    nextRunAt: d.parseTime(r.next_run_at)!,
    lastRunAt: d.parseTime(r.last_slot),
    lastJob: null,
    dormant,
    declared: declaredUntil !== null && !dormant,
    args: boundHead(String(r.args_head), Number(r.args_length), PREVIEW_CHARS),
  };
}

function toGraphNode(r: Row): GraphNodeView {
  return {
    id: Number(r.id),
    type: String(r.type),
    ref: (r.ref as string | null) ?? null,
    state: r.state as JobState,
    progress: Number(r.progress),
    stage: stageText((r.current_stage as string | null) ?? null),
    parentId: r.parent_id == null ? null : Number(r.parent_id),
    isContainer: Number(r.is_container) === 1,
  };
}

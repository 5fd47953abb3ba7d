import { isUniqueViolation } from '../database/db-errors';
import type { SqlExecutor } from '../database/sql-executor';
import { ExistingParentError, FailedUpstreamJobError, MissingUpstreamJobError } from '../errors';
import type { PlannedNode } from '../graph/validate-graph';
import {
  allocateJobIds,
  findJobsByKey,
  insertDependencies,
  insertJobs,
  lockUpstreamJobs,
  setParents,
  type InsertableJob,
} from './job-insert.sql';
import type { NormalizedJob } from './normalize-job';
import { storedCreation } from '../instrumentation/stored-trace';

export interface PreparedGraph {
  planned: PlannedNode[];
  jobs: NormalizedJob[];
  /** Keep graph refs in the `ref` column (false for single `enqueue`). */
  storeRefs: boolean;
  /** Tracing only: a carrier per node, in input order (see lib/instrumentation). */
  carriers?: ReadonlyArray<string | null>;
}

export interface InsertedGraph {
  /** Job id per node, in input order (existing ids for nodes matched by key). */
  ids: number[];
  /** New rows written as `ready`. */
  readyCount: number;
  /** Indices of the nodes written as new jobs (not matched by key). */
  fresh: number[];
}

/**
 * Writes a validated graph with a handful of multi-row statements, all inside the caller's
 * transaction: look up dedup keys, lock existing upstreams, reserve ids, insert jobs, insert
 * edges. Each new job records how many of its dependencies are still open (`pending_deps`) and
 * starts `waiting` if any are, or if it is a container; otherwise `ready`.
 */
export async function insertGraph(tx: SqlExecutor, graph: PreparedGraph, autoIncrementStep = 1): Promise<InsertedGraph> {
  const { planned, jobs } = graph;
  const keys = jobs.map((j) => j.key).filter((k): k is string => k !== null);
  const byKey = keys.length ? await findJobsByKey(tx, [...new Set(keys)]) : new Map();
  const existing = jobs.map((j) => (j.key === null ? undefined : byKey.get(j.key)));

  // Existing jobs referenced by new nodes: numeric dependencies and key-matched nodes.
  const upstreamIds = new Set<number>();
  planned.forEach((node, i) => {
    if (existing[i]) return;
    const parent = node.parentIndex;
    if (parent !== null && existing[parent]) throw new ExistingParentError(node.ref, planned[parent].ref);
    node.depIds.forEach((id) => upstreamIds.add(id));
    node.depIndices.forEach((d) => existing[d] && upstreamIds.add(existing[d]!.id));
  });
  planned.forEach((node, i) => {
    const parent = node.parentIndex;
    if (existing[i] && parent !== null && !existing[parent]) throw new ExistingParentError(node.ref, planned[parent].ref);
  });
  const upstreamState = upstreamIds.size ? await lockUpstreamJobs(tx, [...upstreamIds]) : new Map<number, string>();
  const missing = [...upstreamIds].filter((id) => !upstreamState.has(id));
  if (missing.length) throw new MissingUpstreamJobError(missing.sort((a, b) => a - b));
  for (const [id, state] of upstreamState) {
    if (state === 'failed' || state === 'cancelled') throw new FailedUpstreamJobError(id, state);
  }

  const fresh = planned.map((_, i) => i).filter((i) => !existing[i]);
  // Ids are needed before the insert only to write parent ids in the same statement; PostgreSQL
  // otherwise assigns them and returns them with each row's ref (one round trip less).
  const reserve =
    tx.dialect.name !== 'postgres' || fresh.some((i) => planned[i].parentIndex !== null) || (!graph.storeRefs && fresh.length > 1);
  const reserved = reserve ? await allocateJobIds(tx, fresh.length) : null;
  const ids: number[] = existing.map((e) => e?.id ?? 0);
  if (reserved) fresh.forEach((i, k) => (ids[i] = reserved[k]));

  let readyCount = 0;
  const carriers = graph.carriers;
  // Per fresh node: its upstreams in this graph (indices) and existing ones (ids), each once.
  const upstreams = fresh.map((i) => existingUpstreams(planned[i], existing));
  const rows: InsertableJob[] = fresh.map((i, k) => {
    const node = planned[i];
    const { indices, ids: upstreamIds } = upstreams[k];
    const openDeps = indices.length + upstreamIds.filter((id) => upstreamState.get(id) !== 'done').length;
    const state = node.isContainer || openDeps > 0 ? 'waiting' : 'ready';
    if (state === 'ready') readyCount++;
    // Spelled out rather than spread: a spread into a 16-property literal took ~7 µs per row.
    const job = jobs[i];
    const row: InsertableJob = {
      type: job.type,
      argsJson: job.argsJson,
      group: job.group,
      weight: job.weight,
      priority: job.priority,
      runAfter: job.runAfter,
      maxAttempts: job.maxAttempts,
      timeoutMs: job.timeoutMs,
      key: job.key,
      id: reserved ? ids[i] : null,
      ref: graph.storeRefs ? node.ref : null,
      state,
      parentId: reserved && node.parentIndex !== null ? ids[node.parentIndex] : null,
      isContainer: node.isContainer,
      pendingDeps: openDeps,
      pendingChildren: node.childCount,
    };
    // Added only when traced, so an untraced row keeps the literal's shape (and cost) of before.
    if (carriers) row.traceContext = storedCreation(carriers[i], node.depIndices.length + node.depIds.length > 0);
    return row;
  });

  if (rows.length) {
    const inserted = await insertJobs(tx, rows, autoIncrementStep);
    fresh.forEach((i, k) => (ids[i] = inserted[k]));
    if (!reserved) {
      const parents = fresh
        .filter((i) => planned[i].parentIndex !== null)
        .map((i) => ({ id: ids[i], parentId: ids[planned[i].parentIndex!] }));
      if (parents.length) await setParents(tx, parents);
    }
    const edges: Array<[number, number]> = [];
    fresh.forEach((i, k) => {
      for (const d of upstreams[k].indices) edges.push([ids[i], ids[d]]);
      for (const id of upstreams[k].ids) edges.push([ids[i], id]);
    });
    if (edges.length) await insertDependencies(tx, edges);
  }
  return { ids, readyCount, fresh };
}

/**
 * A new node's upstreams: the new jobs of this graph it waits for (indices) and the existing jobs
 * (ids), each once. A ref matched by key to an existing job and that job's id named too were two
 * edges of one pair: the insert failed on job_deps' primary key with a raw database error.
 */
function existingUpstreams(node: PlannedNode, existing: ReadonlyArray<{ id: number } | undefined>): { indices: number[]; ids: number[] } {
  if (!node.depIndices.some((d) => existing[d])) return { indices: node.depIndices, ids: node.depIds };
  const ids = new Set(node.depIds);
  const indices: number[] = [];
  for (const d of node.depIndices) {
    if (existing[d]) ids.add(existing[d]!.id);
    else indices.push(d);
  }
  return { indices, ids: [...ids] };
}

/** Retries a graph insert that lost a race on a dedup key; the retry sees the winner's row. */
export async function withKeyRaceRetry<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !isUniqueViolation(err)) throw err;
    }
  }
}

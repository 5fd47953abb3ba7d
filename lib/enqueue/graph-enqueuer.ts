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
  type Edge,
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

  const fresh = planned.map((_, i) => i).filter((i) => !existing[i]);
  // Per fresh node: its upstreams in this graph (indices) and existing ones (ids), each once.
  const upstreams = fresh.map((i) => existingUpstreams(planned[i], existing));
  // An existing upstream that failed or was cancelled is refused unless every node waits for it
  // with allowFailure: it then counts as finished, like a done one.
  for (const [id, state] of upstreamState) {
    if ((state === 'failed' || state === 'cancelled') && upstreams.some((u) => u.ids.includes(id) && !u.lenientIds?.has(id))) {
      throw new FailedUpstreamJobError(id, state);
    }
  }

  // Ids are needed before the insert only to write parent ids in the same statement; PostgreSQL
  // otherwise assigns them and returns them with each row's ref (one round trip less).
  const reserve =
    tx.dialect.name !== 'postgres' || fresh.some((i) => planned[i].parentIndex !== null) || (!graph.storeRefs && fresh.length > 1);
  const reserved = reserve ? await allocateJobIds(tx, fresh.length) : null;
  const ids: number[] = existing.map((e) => e?.id ?? 0);
  if (reserved) fresh.forEach((i, k) => (ids[i] = reserved[k]));

  let readyCount = 0;
  const carriers = graph.carriers;
  const rows: InsertableJob[] = fresh.map((i, k) => {
    const node = planned[i];
    const { indices, ids: upstreamIds, lenientIds } = upstreams[k];
    const openDeps = indices.length + upstreamIds.filter((id) => isOpen(upstreamState.get(id), lenientIds?.has(id) === true)).length;
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
    const edges: Edge[] = [];
    fresh.forEach((i, k) => {
      const { indices, ids: upstreamIds, lenientIndices, lenientIds } = upstreams[k];
      if (!lenientIndices && !lenientIds) {
        for (const d of indices) edges.push([ids[i], ids[d]]);
        for (const id of upstreamIds) edges.push([ids[i], id]);
        return;
      }
      for (const d of indices) edges.push([ids[i], ids[d], lenientIndices?.has(d) ? 1 : 0]);
      for (const id of upstreamIds) edges.push([ids[i], id, lenientIds?.has(id) ? 1 : 0]);
    });
    if (edges.length) await insertDependencies(tx, edges);
  }
  return { ids, readyCount, fresh };
}

/** An upstream a new job waits for: done, or (allowing failure) finished in any way, it does not. */
function isOpen(state: string | undefined, lenient: boolean): boolean {
  return state !== 'done' && !(lenient && (state === 'failed' || state === 'cancelled'));
}

interface NodeUpstreams {
  indices: number[];
  ids: number[];
  /** Of `indices` and `ids`, those that allow failure (only when the node has any). */
  lenientIndices?: ReadonlySet<number>;
  lenientIds?: ReadonlySet<number>;
}

/**
 * A new node's upstreams: the new jobs of this graph it waits for (indices) and the existing jobs
 * (ids), each once. A ref matched by key to an existing job and that job's id named too were two
 * edges of one pair: the insert failed on job_deps' primary key with a raw database error. Such
 * a pair allows failure only if both of its names do.
 */
function existingUpstreams(node: PlannedNode, existing: ReadonlyArray<{ id: number } | undefined>): NodeUpstreams {
  const lenient = node.lenient;
  if (!node.depIndices.some((d) => existing[d])) {
    return lenient ? { indices: node.depIndices, ids: node.depIds, lenientIndices: lenient.indices, lenientIds: lenient.ids } : { indices: node.depIndices, ids: node.depIds };
  }
  const ids = new Set(node.depIds);
  const indices: number[] = [];
  const lenientIds = new Set(lenient?.ids);
  const strictIds = new Set(node.depIds.filter((id) => !lenientIds.has(id)));
  for (const d of node.depIndices) {
    if (!existing[d]) {
      indices.push(d);
      continue;
    }
    const id = existing[d]!.id;
    ids.add(id);
    if (lenient?.indices.has(d)) lenientIds.add(id);
    else strictIds.add(id);
  }
  strictIds.forEach((id) => lenientIds.delete(id));
  if (!lenient && !lenientIds.size) return { indices, ids: [...ids] };
  return { indices, ids: [...ids], lenientIndices: lenient?.indices, lenientIds };
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

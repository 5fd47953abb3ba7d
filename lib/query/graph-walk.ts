import { skewedListChunk } from '../database/in-chunks';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { JobNotFoundError } from '../errors/job.errors';
import type { GraphEdge } from './graph-edge';
import { reachedLevels, type ReachRow } from './graph-levels';
import { noJitStatement } from '../database/no-jit.sql';
import { graphReachStatement, REACH_BUDGET, REACH_DEPTH } from './graph-reach.sql';
import { GRAPH_CHUNK, graphEdgesStatement, graphRootStatement, neighboursStatement } from './job-graph.sql';

/** A walk stops collecting jobs here and reports `truncated: true`. */
export const MAX_GRAPH_NODES = 10_000;

/** An executor that can also open a transaction (the queue's database). */
export type TransactionalExecutor = SqlExecutor & { transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> };

/**
 * `walkGraph` on the queue's database. On PostgreSQL in one transaction with JIT off (one connection):
 * without statistics (a new table) or with 50 seeds the planner costs a reach statement over
 * `jit_above_cost` and compiles it, 0.4 s for a statement that runs in 2 ms.
 */
export function walkJobGraph(db: TransactionalExecutor, id: number, maxNodes = MAX_GRAPH_NODES): Promise<{ ids: number[]; truncated: boolean }> {
  if (db.dialect.name !== 'postgres') return walkGraph(db, id, maxNodes);
  return db.transaction(async (tx) => {
    await tx.run(noJitStatement());
    return walkGraph(tx, id, maxNodes);
  });
}

/** A frontier this small is walked on by reach statements, several levels each; a wider one by rounds. */
export const REACH_SEEDS = 50;

/**
 * A reach statement that found fewer levels than this costs more than the rounds it saved (a
 * container per step: each level's budget halves): the next this many levels go by rounds.
 */
export const REACH_MIN_LEVELS = 8;

/** The first reach statement's row budget (see walkGraph). */
export const REACH_FIRST_BUDGET = 64;

/**
 * The ids of a job's connected graph (ids only, no job rows): breadth first from it, stopping at
 * `maxNodes`. The nearest come first: by hops, then by id (a pipeline's jobs are inserted
 * together), so a cut graph keeps the job's own neighbours even beside a 50,000-way fan-in.
 * A narrow frontier is walked by a reach statement (a bounded recursive query: several levels
 * per round trip, as many as its row budget allows), so a chain of 100,000 jobs is not 10,000
 * round trips; a wide one, or a job with more neighbours than the budget, by a round of batched
 * neighbour lookups. Both give the same levels in the same order. `getGraph` then reads every
 * node; the dashboard only what it draws of its 1,000, so jobs with megabytes of args are never
 * all read and parsed to draw boxes.
 */
export async function walkGraph(db: SqlExecutor, id: number, maxNodes = MAX_GRAPH_NODES): Promise<{ ids: number[]; truncated: boolean }> {
  const { rows: root } = await db.run(graphRootStatement(id));
  if (!root.length) throw new JobNotFoundError(id);
  const seen = new Set<number>([id]);
  let frontier = [id];
  let known = new Map<number, { prev: number; deg: number }>();
  let truncated = false;
  // A small graph with many paths between its jobs (a pipeline in its container) is walked on by
  // every path: the first reach statement gets a small budget, later ones four times the jobs
  // the last one found, so a chain's statements grow to the whole budget and a dense graph's stay small.
  let budget = REACH_FIRST_BUDGET;
  let wasNarrow = true;
  let roundsFirst = 0;
  const step = Math.min(GRAPH_CHUNK, skewedListChunk(db.dialect)); // the neighbours include parent_id and depends_on_id lists
  /** Adds a level's new jobs to `next` in order, up to maxNodes (then `truncated`). */
  const take = (found: readonly number[], next: number[]) => {
    for (const n of found) {
      if (seen.has(n)) continue;
      if (seen.size >= maxNodes) {
        truncated = true;
        break;
      }
      seen.add(n);
      next.push(n);
    }
  };
  while (frontier.length && !truncated) {
    const share = Math.floor(budget / frontier.length);
    // After a wide level the narrow one is often a fan-in's sink, with too many neighbours to reach.
    if (frontier.length <= REACH_SEEDS && wasNarrow && !roundsFirst && frontier.every((f) => (known.get(f)?.deg ?? 0) < share)) {
      const { rows } = await db.run(graphReachStatement(db.dialect, frontier.map((f) => ({ id: f, prev: known.get(f)?.prev ?? 0, budget: share }))));
      const reached = reachedLevels(rows.map(toReachRow), seen, id, step, REACH_DEPTH);
      if (reached.levels.length || reached.ends) {
        let next: number[] = [];
        let found = 0;
        for (const level of reached.levels) {
          next = [];
          take(level, next);
          found += next.length;
          if (truncated) break;
        }
        // Rows that were not new jobs are paths around cycles (a ladder's rungs): there, more
        // budget buys few more levels, and costs a row per path.
        budget = 2 * found >= rows.length ? Math.min(REACH_BUDGET, Math.max(REACH_FIRST_BUDGET, 4 * found)) : REACH_FIRST_BUDGET;
        frontier = reached.ends ? [] : next;
        wasNarrow = true;
        if (reached.levels.length < REACH_MIN_LEVELS) roundsFirst = REACH_MIN_LEVELS;
        known = reached.known;
        continue;
      }
    }
    const next: number[] = [];
    for (let i = 0; i < frontier.length && !truncated; i += step) {
      const { rows } = await db.run(neighboursStatement(frontier.slice(i, i + step)));
      take(rows.map((r) => Number(r.id)).sort((a, b) => Math.abs(a - id) - Math.abs(b - id) || a - b), next);
    }
    wasNarrow = frontier.length <= REACH_SEEDS;
    roundsFirst = Math.max(0, roundsFirst - 1);
    frontier = next;
    known = new Map();
  }
  return { ids: [...seen], truncated };
}

function toReachRow(r: Row): ReachRow {
  return { id: Number(r.id), prev: Number(r.prev), depth: Number(r.depth), budget: Number(r.budget), deg: Number(r.deg) };
}

/** Dependency edges between the given jobs (`present`: the nodes actually read), by upstream then dependent. */
export async function graphEdges(db: SqlExecutor, ids: readonly number[], present: ReadonlySet<number>): Promise<Array<{ from: number; to: number }>> {
  const edges: GraphEdge[] = [];
  for (let i = 0; i < ids.length; i += GRAPH_CHUNK) {
    const { rows } = await db.run(graphEdgesStatement(ids.slice(i, i + GRAPH_CHUNK)));
    for (const r of rows) {
      const e: GraphEdge = { from: Number(r.depends_on_id), to: Number(r.job_id) };
      if (Number(r.allow_failure) === 1) e.allowFailure = true;
      if (present.has(e.from) && present.has(e.to)) edges.push(e);
    }
  }
  return edges.sort((a, b) => a.from - b.from || a.to - b.to);
}

import { skewedListChunk } from '../database/in-chunks';
import type { SqlExecutor } from '../database/sql-executor';
import { JobNotFoundError } from '../errors/job.errors';
import { GRAPH_CHUNK, graphEdgesStatement, graphRootStatement, neighboursStatement } from './job-graph.sql';

/** A walk stops collecting jobs here and reports `truncated: true`. */
export const MAX_GRAPH_NODES = 10_000;

/**
 * The ids of a job's connected graph (ids only, no job rows): breadth first from it, one round
 * of batched neighbour lookups per level (never a recursive query), stopping at `maxNodes`. The
 * nearest come first: by hops, then by id (a pipeline's jobs are inserted together), so a cut
 * graph keeps the job's own neighbours even beside a 50,000-way fan-in. `getGraph` then reads
 * every node; the dashboard only what it draws of its 1,000, so jobs with megabytes of args are
 * never all read and parsed to draw boxes.
 */
export async function walkGraph(db: SqlExecutor, id: number, maxNodes = MAX_GRAPH_NODES): Promise<{ ids: number[]; truncated: boolean }> {
  const { rows: root } = await db.run(graphRootStatement(id));
  if (!root.length) throw new JobNotFoundError(id);
  const seen = new Set<number>([id]);
  let frontier = [id];
  let truncated = false;
  const step = Math.min(GRAPH_CHUNK, skewedListChunk(db.dialect)); // the neighbours include parent_id and depends_on_id lists
  while (frontier.length && !truncated) {
    const next: number[] = [];
    for (let i = 0; i < frontier.length && !truncated; i += step) {
      const { rows } = await db.run(neighboursStatement(frontier.slice(i, i + step)));
      const found = rows.map((r) => Number(r.id)).sort((a, b) => Math.abs(a - id) - Math.abs(b - id) || a - b);
      for (const n of found) {
        if (seen.has(n)) continue;
        if (seen.size >= maxNodes) {
          truncated = true;
          break;
        }
        seen.add(n);
        next.push(n);
      }
    }
    frontier = next;
  }
  return { ids: [...seen], truncated };
}

/** Dependency edges between the given jobs (`present`: the nodes actually read), by upstream then dependent. */
export async function graphEdges(db: SqlExecutor, ids: readonly number[], present: ReadonlySet<number>): Promise<Array<{ from: number; to: number }>> {
  const edges: Array<{ from: number; to: number }> = [];
  for (let i = 0; i < ids.length; i += GRAPH_CHUNK) {
    const { rows } = await db.run(graphEdgesStatement(ids.slice(i, i + GRAPH_CHUNK)));
    for (const r of rows) {
      const e = { from: Number(r.depends_on_id), to: Number(r.job_id) };
      if (present.has(e.from) && present.has(e.to)) edges.push(e);
    }
  }
  return edges.sort((a, b) => a.from - b.from || a.to - b.to);
}

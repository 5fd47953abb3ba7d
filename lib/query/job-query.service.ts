import { Injectable } from '@nestjs/common';
import { skewedListChunk } from '../database/in-chunks';
import { JobQueueDatabase } from '../database/job-queue.database';
import { toJobRecord, toJobView } from '../database/job-row';
import { JobNotFoundError } from '../errors/job.errors';
import { InvalidQueryError } from '../errors/query.errors';
import type { JobView } from '../job.types';
import { decodeCursor, encodeCursor } from './find-cursor';
import { GRAPH_CHUNK, graphEdgesStatement, graphNodesStatement, neighboursStatement } from './job-graph.sql';
import { canonicalFilter, normalizeFilter, normalizePageOptions, type FindOptions, type FindResult, type JobFilter } from './job-filter';
import { readPage } from './read-page';

/** `getGraph` stops collecting nodes here and reports `truncated: true`. */
export const MAX_GRAPH_NODES = 10_000;

export interface JobGraph {
  /** Every job connected to the given one through dependencies and containment, in no particular order. */
  nodes: JobView[];
  /** From an upstream to its dependent. Containment is `node.parentId`. */
  edges: Array<{ from: number; to: number }>;
  /** More jobs are connected than `MAX_GRAPH_NODES`; `nodes` holds the nearest ones. */
  truncated: boolean;
}

/** Read-only queries over the jobs table: `find` pages and whole graphs. */
@Injectable()
export class JobQueryService {
  constructor(private readonly db: JobQueueDatabase) {}

  async find<TArgs = unknown, TResult = unknown>(filter: JobFilter = {}, options: FindOptions = {}): Promise<FindResult<TArgs, TResult>> {
    const f = normalizeFilter(filter);
    const { limit, cursor } = normalizePageOptions(options);
    const text = canonicalFilter(f);
    const before = cursor === null ? null : decodeCursor(cursor, text);
    const page = await readPage(this.db, f, before, limit);
    return {
      jobs: page.rows.map((r) => toJobView<TArgs, TResult>(toJobRecord(r, this.db.dialect))),
      nextCursor: page.nextBefore === null ? null : encodeCursor(page.nextBefore, text),
    };
  }

  /**
   * The connected graph of a job: breadth first from it, one round of batched neighbour
   * lookups per level (never a recursive query), stopping at `MAX_GRAPH_NODES`.
   */
  async getGraph(id: number): Promise<JobGraph> {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new InvalidQueryError('id', 'a positive integer', id);
    const { rows: root } = await this.db.run(graphNodesStatement(this.db.dialect, [id]));
    if (!root.length) throw new JobNotFoundError(id);
    const seen = new Set<number>([id]);
    let frontier = [id];
    let truncated = false;
    const step = Math.min(GRAPH_CHUNK, skewedListChunk(this.db.dialect)); // the neighbours include parent_id and depends_on_id lists
    while (frontier.length && !truncated) {
      const next: number[] = [];
      for (let i = 0; i < frontier.length && !truncated; i += step) {
        const { rows } = await this.db.run(neighboursStatement(frontier.slice(i, i + step)));
        for (const r of rows) {
          const n = Number(r.id);
          if (seen.has(n)) continue;
          if (seen.size >= MAX_GRAPH_NODES) {
            truncated = true;
            break;
          }
          seen.add(n);
          next.push(n);
        }
      }
      frontier = next;
    }
    const ids = [...seen];
    const nodes: JobView[] = [];
    const candidates: JobGraph['edges'] = [];
    for (let i = 0; i < ids.length; i += GRAPH_CHUNK) {
      const chunk = ids.slice(i, i + GRAPH_CHUNK);
      const { rows: nodeRows } = await this.db.run(graphNodesStatement(this.db.dialect, chunk));
      const { rows: edgeRows } = await this.db.run(graphEdgesStatement(chunk));
      for (const r of nodeRows) nodes.push(toJobView(toJobRecord(r, this.db.dialect)));
      for (const r of edgeRows) candidates.push({ from: Number(r.depends_on_id), to: Number(r.job_id) });
    }
    // Only edges between returned nodes (a truncated graph, or rows deleted meanwhile by retention).
    const present = new Set(nodes.map((n) => n.id));
    const edges = candidates.filter((e) => present.has(e.from) && present.has(e.to));
    nodes.sort((a, b) => a.id - b.id);
    edges.sort((a, b) => a.from - b.from || a.to - b.to);
    return { nodes, edges, truncated };
  }
}

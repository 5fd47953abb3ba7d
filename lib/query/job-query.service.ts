import { Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { toJobRecord, toJobView } from '../database/job-row';
import { InvalidQueryError } from '../errors/query.errors';
import type { JobView } from '../job.types';
import type { GraphEdge } from './graph-edge';
import { graphEdges, MAX_GRAPH_NODES, walkJobGraph } from './graph-walk';
import { takeBatch } from '../finalize/take-batch';
import { GRAPH_CHUNK, graphNodeSizesStatement, graphNodesStatement } from './job-graph.sql';
import type { FindOptions, FindResult, JobFilter } from './job-filter';
import { findJobsPage } from './read-page';

/** `getGraph` stops collecting nodes here and reports `truncated: true`. */
export { MAX_GRAPH_NODES };

/**
 * `getGraph` also stops where the nodes' args and results come to this many bytes (the nearest
 * are kept, the job itself always): 10,000 jobs of 1 MB were 10 GB read into the process.
 */
export const MAX_GRAPH_BYTES = 64 * 1024 * 1024;

/** Bytes of args and results per statement that reads nodes (SQLite runs each on the event loop). */
const GRAPH_READ_BYTES = 8 * 1024 * 1024;

export interface JobGraph {
  /** Every job connected to the given one through dependencies and containment, in no particular order. */
  nodes: JobView[];
  /**
   * From an upstream to its dependent; `allowFailure: true` on an edge the dependent waits on
   * without needing it to succeed. Containment is `node.parentId`.
   */
  edges: GraphEdge[];
  /** More jobs are connected than `MAX_GRAPH_NODES`, or than fit `MAX_GRAPH_BYTES`; `nodes` holds the nearest ones. */
  truncated: boolean;
}

/** Read-only queries over the jobs table: `find` pages and whole graphs. */
@Injectable()
export class JobQueryService {
  constructor(private readonly db: JobQueueDatabase) {}

  async find<TArgs = unknown, TResult = unknown>(filter: JobFilter = {}, options: FindOptions = {}): Promise<FindResult<TArgs, TResult>> {
    const page = await findJobsPage(this.db, filter, options);
    return { jobs: page.rows.map((r) => toJobView<TArgs, TResult>(toJobRecord(r, this.db.dialect))), nextCursor: page.nextCursor };
  }

  /**
   * The connected graph of a job (see `walkGraph`), every node read, stopping at `MAX_GRAPH_NODES`
   * or `MAX_GRAPH_BYTES`, in statements of about GRAPH_READ_BYTES with a turn of the event loop between.
   */
  async getGraph(id: number): Promise<JobGraph> {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new InvalidQueryError('id', 'a positive integer', id);
    const walked = await walkJobGraph(this.db, id);
    // Nearest first (the walk's order): the nodes whose args and results fit MAX_GRAPH_BYTES.
    const sizes = new Map<number, number>();
    for (let i = 0; i < walked.ids.length; i += GRAPH_CHUNK) {
      const { rows } = await this.db.run(graphNodeSizesStatement(this.db.dialect, walked.ids.slice(i, i + GRAPH_CHUNK)));
      for (const r of rows) sizes.set(Number(r.id), Number(r.bytes ?? 0));
    }
    const sizeOf = (node: number) => sizes.get(node) ?? 0;
    const ids = takeBatch([...walked.ids], walked.ids.length, MAX_GRAPH_BYTES, sizeOf);
    const truncated = walked.truncated || ids.length < walked.ids.length;
    const nodes: JobView[] = [];
    for (const left = [...ids]; left.length; ) {
      const slice = takeBatch(left, GRAPH_CHUNK, GRAPH_READ_BYTES, sizeOf);
      const { rows } = await this.db.run(graphNodesStatement(this.db.dialect, slice));
      for (const r of rows) nodes.push(toJobView(toJobRecord(r, this.db.dialect)));
      if (left.length) await new Promise((resolve) => setImmediate(resolve));
    }
    // Only edges between returned nodes (a truncated graph, or rows deleted meanwhile by retention).
    const edges = await graphEdges(this.db, ids, new Set(nodes.map((n) => n.id)));
    nodes.sort((a, b) => a.id - b.id);
    return { nodes, edges, truncated };
  }
}

import { Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { toJobRecord, toJobView } from '../database/job-row';
import { InvalidQueryError } from '../errors/query.errors';
import type { JobView } from '../job.types';
import { graphEdges, MAX_GRAPH_NODES, walkJobGraph } from './graph-walk';
import { GRAPH_CHUNK, graphNodesStatement } from './job-graph.sql';
import type { FindOptions, FindResult, JobFilter } from './job-filter';
import { findPage } from './read-page';

/** `getGraph` stops collecting nodes here and reports `truncated: true`. */
export { MAX_GRAPH_NODES };

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
    const page = await findPage(this.db, filter, options);
    return { jobs: page.rows.map((r) => toJobView<TArgs, TResult>(toJobRecord(r, this.db.dialect))), nextCursor: page.nextCursor };
  }

  /** The connected graph of a job (see `walkGraph`), every node read, stopping at `MAX_GRAPH_NODES`. */
  async getGraph(id: number): Promise<JobGraph> {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new InvalidQueryError('id', 'a positive integer', id);
    const { ids, truncated } = await walkJobGraph(this.db, id);
    const nodes: JobView[] = [];
    for (let i = 0; i < ids.length; i += GRAPH_CHUNK) {
      const { rows } = await this.db.run(graphNodesStatement(this.db.dialect, ids.slice(i, i + GRAPH_CHUNK)));
      for (const r of rows) nodes.push(toJobView(toJobRecord(r, this.db.dialect)));
    }
    // Only edges between returned nodes (a truncated graph, or rows deleted meanwhile by retention).
    const edges = await graphEdges(this.db, ids, new Set(nodes.map((n) => n.id)));
    nodes.sort((a, b) => a.id - b.id);
    return { nodes, edges, truncated };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { JobQueueDatabase } from './database/job-queue.database';
import { jobColumns, toJobRecord, toJobView } from './database/job-row';
import { sql } from './database/sql';
import type { SqlExecutor } from './database/sql-executor';
import { insertGraph, withKeyRaceRetry, type PreparedGraph } from './enqueue/graph-enqueuer';
import { normalizeJob, type NormalizeContext } from './enqueue/normalize-job';
import { InvalidJobError, UnknownJobTypeError } from './errors';
import { validateGraph } from './graph/validate-graph';
import { JobHandlerRegistry } from './handlers/job-handler.registry';
import { JOB_QUEUE_OPTIONS } from './job-queue.constants';
import type { ResolvedJobQueueOptions } from './job-queue.options';
import type { EnqueueInput, EnqueueOptions, GraphIds, GraphNode, JobView } from './job.types';
import { JobQueueConnection } from './database/job-queue.connection';

/** Enqueue graphs and single jobs, and read them back. */
@Injectable()
export class JobQueueService {
  private readonly db: JobQueueDatabase;

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly connection: JobQueueConnection,
    private readonly registry: JobHandlerRegistry,
  ) {
    this.db = connection.db;
  }

  /**
   * Enqueues one job and returns it. With `{ manager }` the insert joins that TypeORM
   * transaction. A `key` that already exists returns the existing job.
   */
  async enqueue<TArgs = unknown, TResult = unknown>(
    input: EnqueueInput<TArgs>,
    options: EnqueueOptions = {},
  ): Promise<JobView<TArgs, TResult>> {
    const graph = this.prepare([{ ...input, ref: 'job' } as GraphNode], false);
    const [id] = await this.write(graph, options);
    const job = await this.read(id, options.manager ? this.db.executorFor(options.manager) : this.db);
    return job as JobView<TArgs, TResult>;
  }

  /**
   * Enqueues a DAG in one transaction, all or nothing, and returns `{ [ref]: id }`. `dependsOn`
   * names refs of this graph or ids of existing jobs; `parent` makes a node the child of a
   * container node. Invalid graphs throw a `GraphValidationError` and write nothing.
   */
  async enqueueGraph<TRef extends string = string>(
    nodes: ReadonlyArray<GraphNode & { ref: TRef }>,
    options: EnqueueOptions = {},
  ): Promise<GraphIds<TRef>> {
    if (!Array.isArray(nodes)) throw new InvalidJobError('(graph)', 'an array of nodes', nodes);
    const graph = this.prepare(nodes, true);
    const ids = nodes.length ? await this.write(graph, options) : [];
    const out = {} as GraphIds<TRef>;
    nodes.forEach((node, i) => (out[node.ref as TRef] = ids[i]));
    return out;
  }

  /** The job, or null if no job has this id. */
  async get<TArgs = unknown, TResult = unknown>(id: number): Promise<JobView<TArgs, TResult> | null> {
    return (await this.read(id, this.db)) as JobView<TArgs, TResult> | null;
  }

  private async read(id: number, executor: SqlExecutor): Promise<JobView | null> {
    if (!Number.isSafeInteger(id) || id <= 0) throw new InvalidJobError('id', 'a positive integer', id);
    const { rows } = await executor.run(sql`SELECT ${jobColumns(executor.dialect)} FROM jobs WHERE id = ${id}`);
    return rows.length ? toJobView(toJobRecord(rows[0], executor.dialect)) : null;
  }

  private prepare(nodes: readonly GraphNode[], storeRefs: boolean): PreparedGraph {
    const planned = validateGraph(nodes);
    const ctx: NormalizeContext = {
      maxArgsBytes: this.options.maxArgsBytes,
      defaultMaxAttempts: this.options.defaultMaxAttempts,
      defaultTimeoutMs: this.options.defaultTimeoutMs,
      groupWeights: this.options.groupWeights,
      handlerDefaults: (type) => this.registry.get(type)?.options,
    };
    const jobs = nodes.map((node, i) => {
      const job = normalizeJob(node, ctx, storeRefs ? node.ref : undefined);
      if (!planned[i].isContainer) this.assertRunnableType(job.type);
      return job;
    });
    return { planned, jobs, storeRefs };
  }

  private assertRunnableType(type: string): void {
    if (!this.options.strictTypes || this.registry.get(type) || this.options.externalTypes.includes(type)) return;
    throw new UnknownJobTypeError(type, this.registry.types());
  }

  private async write(graph: PreparedGraph, options: EnqueueOptions): Promise<number[]> {
    const step = this.connection.autoIncrementStep;
    if (options.manager) {
      // The application's transaction: it owns commit and retry.
      return (await insertGraph(this.db.executorFor(options.manager), graph, step)).ids;
    }
    const { ids } = await withKeyRaceRetry(() => this.db.transaction((tx) => insertGraph(tx, graph, step)));
    return ids;
  }
}

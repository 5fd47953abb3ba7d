import 'reflect-metadata';
import { Injectable, Module, type DynamicModule, type INestApplicationContext, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClaimService,
  JobContext,
  JobHandler,
  JobQueueModule,
  JobQueueService,
  type Dialect,
  type GraphNode,
  type JobQueueModuleOptions,
} from 'nestjs-sql-job-queue';
import { JobQueueMetricsModule } from 'nestjs-sql-job-queue/metrics';
import { OnJobEvent, type JobEventDetail, type JobView } from 'nestjs-sql-job-queue';
import { Registry } from 'prom-client';
import { ExecutionLog } from '../execution-log';

/** The bench's job type: does nothing but count itself (and its latency tag, if any). */
@Injectable()
export class NoopJobs {
  @JobHandler('noop')
  async noop(args: { tag?: number } | null, ctx: JobContext): Promise<null> {
    ExecutionLog.current.record(ctx.id, args?.tag);
    return null;
  }
}

/**
 * Observability on: 'metrics' = the metrics module (its own registry) and an @OnJobEvent('failed')
 * listener, as the sample app has (views are read only for failures); 'completed' = the same plus a
 * listener on every completion (a batched view read per flush).
 */
export type Observe = 'metrics' | 'completed';

@Injectable()
class FailedListener {
  failures = 0;
  @OnJobEvent('failed')
  onFailed(_job: JobView, _detail: JobEventDetail): void {
    this.failures++;
  }
}

@Injectable()
class CompletedListener {
  seen = 0;
  @OnJobEvent('completed')
  onCompleted(job: JobView): void {
    if (job.id) this.seen++;
  }
}

@Module({})
class BenchQueueModule {
  static with(options: JobQueueModuleOptions, withHandlers: boolean, extra: Array<DynamicModule | Type> = [], observe?: Observe): DynamicModule {
    const providers = [...(withHandlers ? [NoopJobs] : []), ...(observe ? [FailedListener] : []), ...(observe === 'completed' ? [CompletedListener] : [])];
    const imports = [JobQueueModule.forRoot(options), ...extra, ...(observe ? [JobQueueMetricsModule.forRoot({ registry: new Registry() })] : [])];
    return { module: BenchQueueModule, imports, providers };
  }
}

export interface OurApp {
  app: INestApplicationContext;
  queue: JobQueueService;
  claims: ClaimService;
  close(): Promise<void>;
}

/** Settings every worker of ours uses unless a scenario says otherwise. */
export const OUR_WORKER_DEFAULTS = { concurrency: 10, pollIntervalMs: 1000 } as const;

export function ourOptions(dialect: Dialect, url: string, overrides: Partial<JobQueueModuleOptions> = {}): JobQueueModuleOptions {
  return { dialect, url, ...OUR_WORKER_DEFAULTS, ...overrides } as JobQueueModuleOptions;
}

/**
 * Boots a Nest application context the way a user's app would: `JobQueueModule.forRoot(options)`
 * plus, for a worker, a provider with the `noop` handler. An enqueue-only app passes
 * `worker: false` and no handlers.
 */
export async function bootOurs(
  options: JobQueueModuleOptions,
  withHandlers = options.worker !== false,
  /** More modules next to the queue's (e.g. JobQueueTracingModule.forRoot()). */
  extra: Array<DynamicModule | Type> = [],
  observe?: Observe,
): Promise<OurApp> {
  const opts = withHandlers ? options : { externalTypes: ['noop'], ...options };
  const app = await NestFactory.createApplicationContext(BenchQueueModule.with(opts, withHandlers, extra, observe), { logger: ['error', 'warn'] });
  return { app, queue: app.get(JobQueueService), claims: app.get(ClaimService), close: () => app.close() };
}

/** An enqueue-only app (worker: false) on the same database. */
export function bootEnqueuer(dialect: Dialect, url: string, extra: Array<DynamicModule | Type> = [], observe?: Observe): Promise<OurApp> {
  return bootOurs({ dialect, url, worker: false }, false, extra, observe);
}

/** Enqueues `count` independent no-op jobs with `enqueueGraph`, `chunk` nodes per call; returns their ids. */
export async function enqueueNoops(queue: JobQueueService, count: number, chunk = 1_000): Promise<number[]> {
  const ids: number[] = [];
  for (let start = 0; start < count; start += chunk) {
    const nodes: GraphNode[] = [];
    for (let i = start; i < Math.min(count, start + chunk); i++) nodes.push({ ref: `j${i}`, type: 'noop', args: {} });
    const out = await queue.enqueueGraph(nodes);
    for (const node of nodes) ids.push(out[node.ref]);
  }
  return ids;
}

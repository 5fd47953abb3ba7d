import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { JobHandler, JobQueueModule, JobQueueService, type JobQueueModuleOptions } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { bootContext, runWorker, send, workerOptions } from './worker-harness';

@Injectable()
class Handlers {
  @JobHandler('noop')
  async noop(): Promise<null> {
    return null;
  }
}

@Module({})
class BatchSizesModule {
  static with(options: JobQueueModuleOptions): DynamicModule {
    return { module: BatchSizesModule, imports: [JobQueueModule.forRoot(options)], providers: [Handlers] };
  }
}

/** Heap and RSS after a full GC (the process runs with --expose-gc). */
function measure(): { heap: number; rss: number } {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heap: heapUsed, rss };
}

/**
 * An enqueue-only process that writes one graph of every size from 1 to `sizes` (each job after
 * the first depends on the first, so the edges vary too), and reports its memory before and
 * after: statements whose text follows the batch size must not pile up.
 */
runWorker(async () => {
  const { sizes, ...options } = workerOptions<JobQueueModuleOptions & { sizes: number }>();
  const app = await bootContext(BatchSizesModule.with({ ...options, worker: false }));
  const queue = app.get(JobQueueService);
  const graph = (n: number) => Array.from({ length: n }, (_, i) => ({ ref: `r${i}`, type: 'noop', dependsOn: i ? ['r0'] : [] }));
  for (const n of [1, 2, 3, 4, 1_000]) await queue.enqueueGraph(graph(n)); // warm-up: every path once
  const before = measure();
  for (let n = 1; n <= sizes; n++) await queue.enqueueGraph(graph(n));
  const after = measure();
  send({ type: 'result', before, after, statements: app.get(JobQueueDatabase).sqliteStatementCounts ?? null });
  await app.close();
});

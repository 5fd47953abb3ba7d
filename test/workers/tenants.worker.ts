import { Injectable, Module } from '@nestjs/common';
import { createInterface } from 'node:readline';
import { JobHandler, JobQueueModule, OnJobEvent, type JobContext, type JobQueueModuleOptions } from '../../lib';
import { JobQueueMetrics, JobQueueMetricsModule } from '../../lib/metrics';
import { JobQueueTracingModule } from '../../lib/tracing';
import { installTracingSdk } from '../support/tracing-sdk';
import { bootContext, runWorker, send, workerOptions } from './worker-harness';

let handled = 0;
let heard = 0;

@Injectable()
class TenantJobs {
  @JobHandler('tenant')
  async tenant(_args: unknown, ctx: JobContext): Promise<null> {
    handled++;
    if (ctx.id % 10 === 0) await ctx.progress(50, 'half');
    return null;
  }

  @OnJobEvent('started') started(): void {
    heard++;
  }

  @OnJobEvent('completed') completed(): void {
    heard++;
  }
}

/**
 * A worker with every per-process feature a tenant touches: the options given (limits, rate
 * limits, weights), metrics (without the opt-in group label), tracing through an SDK, lifecycle
 * listeners. `measure <tag>` answers `memory-<tag>` with the heap after a full GC (run with
 * --expose-gc); the exported spans are dropped first, they are the test's, not the queue's.
 */
runWorker(async () => {
  const sdk = installTracingSdk();
  @Module({
    imports: [JobQueueModule.forRoot(workerOptions<JobQueueModuleOptions>()), JobQueueMetricsModule.forRoot({}), JobQueueTracingModule.forRoot()],
    providers: [TenantJobs],
  })
  class AppModule {}
  const app = await bootContext(AppModule);
  app.enableShutdownHooks(['SIGTERM']);
  send({ type: 'ready' });
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    const [command, tag] = line.trim().split(' ');
    if (command !== 'measure') return;
    void app
      .get(JobQueueMetrics)
      .registry.metrics() // a scrape, as Prometheus would make
      .then(() => {
        sdk.exporter.reset();
        const gc = (globalThis as { gc?: () => void }).gc!;
        gc();
        gc();
        send({ type: `memory-${tag}`, heap: process.memoryUsage().heapUsed, handled, heard });
      });
  });
});

import { Module, type DynamicModule } from '@nestjs/common';
import { JobQueueMetrics } from './job-queue.metrics';
import { createMetricsController } from './metrics.controller';
import { METRICS_OPTIONS } from './metrics.constants';
import { resolveMetricsOptions, type JobQueueMetricsOptions } from './metrics.options';

/**
 * Prometheus metrics of the queue (peer dependency prom-client 15). Import it next to
 * JobQueueModule: `JobQueueMetricsModule.forRoot({ path: '/metrics' })`, or pass the
 * `registry` your app already serves (e.g. @willsoto/nestjs-prometheus's).
 */
@Module({})
export class JobQueueMetricsModule {
  static forRoot(options: JobQueueMetricsOptions = {}): DynamicModule {
    const resolved = resolveMetricsOptions(options);
    return {
      module: JobQueueMetricsModule,
      controllers: resolved.path === null ? [] : [createMetricsController(resolved.path)],
      providers: [{ provide: METRICS_OPTIONS, useValue: resolved }, JobQueueMetrics],
      exports: [JobQueueMetrics],
    };
  }
}

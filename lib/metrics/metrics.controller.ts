import { Controller, Get, Header, type Type } from '@nestjs/common';
import { JobQueueMetrics } from './job-queue.metrics';

/** GET `path`: the registry in Prometheus text format. A class per path (Nest reads it from the decorator). */
export function createMetricsController(path: string): Type<unknown> {
  @Controller(path)
  class JobQueueMetricsController {
    constructor(private readonly metrics: JobQueueMetrics) {}

    @Get()
    @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
    @Header('Cache-Control', 'no-store')
    scrape(): Promise<string> {
      return this.metrics.registry.metrics();
    }
  }
  return JobQueueMetricsController;
}

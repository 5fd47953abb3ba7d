export { JobQueueMetricsModule } from './job-queue-metrics.module';
export { JobQueueMetrics } from './job-queue.metrics';
export { METRIC_NAMES } from './metrics.constants';
export { DEFAULT_BUCKETS, type JobQueueMetricsOptions } from './metrics.options';

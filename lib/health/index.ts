export { JobQueueHealthModule } from './job-queue-health.module';
export { JobQueueHealthIndicator, type JobQueueHealthOptions } from './job-queue.health';

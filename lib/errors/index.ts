export * from './job-queue.error';
export * from './options.errors';
export * from './job.errors';
export * from './graph.errors';
export * from './schedule.errors';

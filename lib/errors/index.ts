export * from './job-queue.error';
export * from './options.errors';
export * from './job.errors';
export * from './graph.errors';
export * from './wait.errors';
export * from './query.errors';
export * from './schedule.errors';
export * from './validation.errors';

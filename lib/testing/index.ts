/** `nestjs-sql-job-queue/testing`: the queue on a temporary SQLite file, and a tester to drain it. */
export { JobQueueTestingModule, type JobQueueTestingOptions } from './job-queue-testing.module';
export { JobQueueTester, type DrainOptions, type RunOptions, type RunRecord } from './job-queue.tester';
export { DrainStuckError, DrainTimeoutError, TestingHandlerNotFoundError, type StuckWork } from './testing.errors';

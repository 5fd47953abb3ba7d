/** Injection tokens. */
export const JOB_QUEUE_OPTIONS = Symbol('JOB_QUEUE_OPTIONS');
export const JOB_QUEUE_DATA_SOURCE = Symbol('JOB_QUEUE_DATA_SOURCE');
export const JOB_HANDLER_METADATA = 'nestjs-sql-job-queue:job-handler';

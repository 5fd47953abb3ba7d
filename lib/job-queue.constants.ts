/** Injection token of the validated options (`ResolvedJobQueueOptions`), defaults applied. */
export const JOB_QUEUE_OPTIONS = Symbol('JOB_QUEUE_OPTIONS');
/** Injection token of the TypeORM DataSource the queue uses (its own, or the one you passed). */
export const JOB_QUEUE_DATA_SOURCE = Symbol('JOB_QUEUE_DATA_SOURCE');
/** @internal Metadata key of `@JobHandler`. */
export const JOB_HANDLER_METADATA = 'nestjs-sql-job-queue:job-handler';
/** @internal Metadata key of `@Recurring`. */
export const RECURRING_METADATA = 'nestjs-sql-job-queue:recurring';

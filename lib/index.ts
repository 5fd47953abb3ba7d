export { JobQueueModule } from './job-queue.module';
export { JobQueueService } from './job-queue.service';
export { JobHandler, type JobHandlerDecorator, type JobHandlerOptions } from './handlers/job-handler.decorator';
export type {
  JobArgs,
  JobResult,
  JobTypeName,
  JobTypes,
  JobUpstream,
  TypedEnqueueInput,
  TypedGraphNode,
  TypedJobView,
} from './typing/job-types';
export type { JobHandlerMethod } from './typing/handler-types';
export { isStandardSchema, type StandardSchemaV1 } from './typing/standard-schema';
export { DuplicateJobHandlerError, InvalidJobHandlerError } from './handlers/job-handler.errors';
export { JobContext } from './handlers/job-context';
export type { UpstreamFailure } from './handlers/job-context';
export { OnJobEvent } from './events/on-job-event.decorator';
export { JOB_EVENT_NAMES, type JobEventDetail, type JobEventListener, type JobEventName } from './events/job-event.types';
export { JobLifecycle } from './events/job-lifecycle';
export type { JobSignal, JobSignalSink } from './events/job-signal';
export { WorkerVitals } from './scheduler/worker-vitals';
export { JOB_REF, JobRefOutsideJobError, type JobRef } from './handlers/job-ref';
export { Recurring, type RecurringArgs, type RecurringOptions } from './recurring/recurring.decorator';
export type { Backfill, ScheduleInput } from './recurring/schedule-definition';
export type { ScheduleView } from './recurring/schedule-view';
export type { FindSchedulesResult, ScheduleFilter } from './recurring/schedule-filter';
export type { JobLogLevel, JobLogLine, JobLogPage, JobLogQuery } from './logs/job-log.types';
export {
  JobCancelledError,
  JobTimeoutError,
  LeaseLostError,
  MAX_SNOOZE_MS,
  ShutdownAbortError,
  SnoozeJobError,
  UnrecoverableJobError,
} from './handlers/job-abort.errors';
export type { WaitForOptions } from './job-queue.service';
export { JobWaiters, type JobWatchHandlers, type JobWaitersCounters } from './waiters/job-waiters.service';
export type { QueueStats } from './stats/queue-stats';
export type { StatsOptions } from './stats/stats-options';
export type { FindOptions, FindResult, JobFilter } from './query/job-filter';
export type { RescheduleInput } from './query/reschedule-input';
export type { JobGraph } from './query/job-query.service';
export type { GraphEdge } from './query/graph-edge';
export type { PauseTarget } from './pause/pause-target';
export type { FindPausedResult, PausedFilter, PausedView } from './pause/paused-filter';
export type {
  Dialect,
  JobQueueLimits,
  JobQueueRateLimits,
  RateLimit,
  JobQueueModuleOptions,
  ResolvedJobQueueOptions,
  RetryBackoffOptions,
} from './job-queue.options';
export type { EnqueueInput, EnqueueOptions, GraphIds, GraphNode, JobOptions, JobState, JobView } from './job.types';
export type { Dependency, LenientDependency } from './graph/validate-graph';
export { TERMINAL_STATES } from './job.types';
export { JOB_QUEUE_DATA_SOURCE, JOB_QUEUE_OPTIONS } from './job-queue.constants';
export { JobEntity } from './entities/job.entity';
export { JobDepEntity } from './entities/job-dep.entity';
export { jobQueueMigrations, jobQueueMigrationClasses, JobQueueMigration } from './migrations';
export { ClaimService } from './claim/claim.service';
export type { ClaimedJob } from './claim/claimed-job';
export type { ClaimQuota, ClaimRequest } from './claim/claim-request';
export {
  JOB_QUEUE_INSTRUMENTATION,
  type AttemptOutcome,
  type AttemptTrace,
  type EnqueueInstrumentation,
  type InstrumentedAttempt,
  type InstrumentedEnqueueJob,
  type JobQueueInstrumentation,
} from './instrumentation/job-queue.instrumentation';
export type { RunOutcome } from './handlers/run-job';
export * from './errors';

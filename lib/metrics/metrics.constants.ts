export const METRICS_OPTIONS = Symbol('JOB_QUEUE_METRICS_OPTIONS');

/** The metric names (DESIGN.md): a contract, dashboards and alerts depend on them. */
export const METRIC_NAMES = {
  enqueued: 'job_queue_jobs_enqueued_total',
  completed: 'job_queue_jobs_completed_total',
  failed: 'job_queue_jobs_failed_total',
  retried: 'job_queue_jobs_retried_total',
  snoozed: 'job_queue_jobs_snoozed_total',
  duration: 'job_queue_job_duration_seconds',
  wait: 'job_queue_job_wait_seconds',
  jobs: 'job_queue_jobs',
  oldestReadyAge: 'job_queue_oldest_ready_age_seconds',
  failingSchedules: 'job_queue_schedules_failing',
} as const;

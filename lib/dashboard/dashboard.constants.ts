export const DASHBOARD_OPTIONS = Symbol('JOB_QUEUE_DASHBOARD_OPTIONS');
/** Per-process CSRF token, embedded in the page and required on every action. */
export const DASHBOARD_CSRF_TOKEN = Symbol('JOB_QUEUE_DASHBOARD_CSRF_TOKEN');
/** The header every action must carry (a custom header: a cross-site form or image cannot send it). */
export const CSRF_HEADER = 'x-job-queue-csrf';

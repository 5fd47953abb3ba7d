import { JobQueueError } from '../errors/job-queue.error';
import { describeValue } from '../errors/options.errors';

/** `JobQueueDashboardModule` was configured without an `auth` decision. The app does not start. */
export class DashboardAuthRequiredError extends JobQueueError {
  readonly code = 'DASHBOARD_AUTH_REQUIRED';

  constructor(received: unknown) {
    super(
      `JobQueueDashboardModule: "auth" must be a function (req) => boolean | Promise<boolean>, or the string 'public' ` +
        `to serve the dashboard to anyone who can reach it; received ${describeValue(received)}.`,
    );
  }
}

/** A dashboard option other than `auth` is invalid. The app does not start. */
export class InvalidDashboardOptionsError extends JobQueueError {
  readonly code = 'INVALID_DASHBOARD_OPTIONS';

  constructor(
    readonly field: string,
    readonly expected: string,
    received: unknown,
  ) {
    super(`JobQueueDashboardModule: "${field}" must be ${expected}; received ${describeValue(received)}.`);
  }
}

/** An action reached a dashboard mounted with `readOnly: true`. Nothing was changed. */
export class DashboardReadOnlyError extends JobQueueError {
  readonly code = 'DASHBOARD_READ_ONLY';

  constructor() {
    super('The dashboard is read-only: actions are disabled.');
  }
}

/** An action came without the dashboard's CSRF header or from another origin. Nothing was changed. */
export class DashboardCsrfError extends JobQueueError {
  readonly code = 'DASHBOARD_CSRF';

  constructor(reason: string) {
    super(`Action refused: ${reason}.`);
  }
}

/** The request did not pass the dashboard's `auth` function. */
export class DashboardUnauthorizedError extends JobQueueError {
  readonly code = 'DASHBOARD_UNAUTHORIZED';

  constructor() {
    super('Not authorized to use the job queue dashboard.');
  }
}

/**
 * "Remove" of an `@Recurring` schedule that a running process declares: its next start-up would
 * store it again, so the dashboard refuses (remove the method instead). Nothing was changed.
 */
export class DashboardScheduleDeclaredError extends JobQueueError {
  readonly code = 'SCHEDULE_DECLARED';

  constructor(readonly schedule: string) {
    super(
      `Schedule "${schedule}" is an @Recurring method that a running process declares: removed here, it would come back at that process's next start. Remove the method from the code; once no process declares it, it goes dormant and can be removed.`,
    );
  }
}

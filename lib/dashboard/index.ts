export { JobQueueDashboardModule } from './dashboard.module';
export {
  DASHBOARD_PUBLIC,
  type DashboardAuth,
  type JobQueueDashboardAsyncOptions,
  type JobQueueDashboardOptions,
} from './dashboard.options';
export { basicAuth } from './basic-auth';
export { CSRF_HEADER } from './dashboard.constants';
export {
  DashboardAuthRequiredError,
  DashboardCsrfError,
  DashboardReadOnlyError,
  DashboardScheduleDeclaredError,
  DashboardUnauthorizedError,
  InvalidDashboardOptionsError,
} from './dashboard.errors';

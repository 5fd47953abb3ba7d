import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { DASHBOARD_CSRF_TOKEN, DASHBOARD_OPTIONS } from './dashboard.constants';
import { DashboardActionGuard } from './dashboard-action.guard';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { createDashboardController } from './dashboard.controller';
import { DashboardErrorsFilter } from './dashboard-errors.filter';
import {
  normalizeDashboardPath,
  resolveDashboardOptions,
  type JobQueueDashboardAsyncOptions,
  type JobQueueDashboardOptions,
} from './dashboard.options';
import { DashboardService } from './dashboard.service';

const shared: Provider[] = [
  DashboardService,
  DashboardAuthGuard,
  DashboardActionGuard,
  DashboardErrorsFilter,
  // One random token per process: it reaches only pages that passed `auth`.
  { provide: DASHBOARD_CSRF_TOKEN, useFactory: () => randomBytes(32).toString('base64url') },
];

/**
 * A web UI over the queue, mounted in your app (Express). Import it next to JobQueueModule:
 * `JobQueueDashboardModule.forRoot({ path: '/queue', auth: (req) => req.user?.isAdmin === true })`.
 * `auth` is required (or `'public'`, written out); without it the app does not start.
 */
@Module({})
export class JobQueueDashboardModule {
  static forRoot(options: JobQueueDashboardOptions): DynamicModule {
    const resolved = resolveDashboardOptions(options); // a missing auth fails here, at start-up
    return {
      module: JobQueueDashboardModule,
      controllers: [createDashboardController(resolved.path)],
      providers: [{ provide: DASHBOARD_OPTIONS, useValue: resolved }, ...shared],
    };
  }

  static forRootAsync(options: JobQueueDashboardAsyncOptions): DynamicModule {
    const path = normalizeDashboardPath(options.path);
    return {
      module: JobQueueDashboardModule,
      imports: options.imports ?? [],
      controllers: [createDashboardController(path)],
      providers: [
        {
          provide: DASHBOARD_OPTIONS,
          inject: options.inject ?? [],
          useFactory: async (...args: unknown[]) => resolveDashboardOptions(await options.useFactory(...args), path),
        },
        ...shared,
      ],
    };
  }
}

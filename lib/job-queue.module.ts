import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { ClaimService } from './claim/claim.service';
import { JobQueueConnection } from './database/job-queue.connection';
import { JobQueueDatabase } from './database/job-queue.database';
import { JobHandlerExplorer } from './handlers/job-handler.explorer';
import { JobHandlerRegistry } from './handlers/job-handler.registry';
import { JOB_QUEUE_DATA_SOURCE, JOB_QUEUE_OPTIONS } from './job-queue.constants';
import {
  ASYNC_OPTIONS_TYPE,
  ConfigurableJobQueueModule,
  JOB_QUEUE_MODULE_OPTIONS,
  OPTIONS_TYPE,
} from './job-queue.module-definition';
import type { Dialect, JobQueueModuleOptions } from './job-queue.options';
import { JobQueueService } from './job-queue.service';
import { JobQueueEvents } from './events/job-queue.events';
import { FinalizeService } from './finalize/finalize.service';
import { SlicedPromotions } from './finalize/sliced-promotions';
import { PgNotifyListener } from './notify/pg-notify.listener';
import { SettledNotifier } from './notify/settled.notifier';
import { JobQueueOrchestrator } from './scheduler/job-queue.orchestrator';
import { ShutdownClock } from './scheduler/shutdown-clock';
import { SchedulerService } from './scheduler/scheduler.service';
import { SweepsService } from './sweeps/sweeps.service';
import { resolveOptions } from './options/resolve-options';
import { JobWaiters } from './waiters/job-waiters.service';
import { JobQueryService } from './query/job-query.service';
import { JobAdminService } from './query/job-admin.service';
import { JobLogService } from './logs/job-log.service';
import { PauseService } from './pause/pause.service';
import { PausedWork } from './pause/paused-work';
import { RecurringExplorer } from './recurring/recurring.explorer';
import { RecurringService } from './recurring/recurring.service';
import { JobArgsValidator } from './validation/job-args.validator';
import { JOB_REF, jobRefProvider } from './handlers/job-ref';
import { AppTransactionGuard } from './enqueue/app-transaction.guard';
import { JobLifecycle } from './events/job-lifecycle';
import { JobEventExplorer } from './events/job-event.explorer';
import { WorkerVitals } from './scheduler/worker-vitals';

/**
 * `JobQueueModule.forRoot('sqlite')`, `forRoot({ dialect: 'postgres', url })`, or
 * `forRootAsync({ inject, useFactory })`. Global by default, so `JobQueueService` can be
 * injected anywhere once the module is imported at the root.
 */
@Module({
  imports: [DiscoveryModule, ScheduleModule.forRoot()],
  providers: [
    {
      provide: JOB_QUEUE_OPTIONS,
      inject: [JOB_QUEUE_MODULE_OPTIONS],
      useFactory: (raw: JobQueueModuleOptions) => resolveOptions(raw),
    },
    {
      provide: JobQueueConnection,
      inject: [JOB_QUEUE_OPTIONS],
      useFactory: (options: ReturnType<typeof resolveOptions>) => JobQueueConnection.open(options),
    },
    { provide: JobQueueDatabase, inject: [JobQueueConnection], useFactory: (c: JobQueueConnection) => c.db },
    { provide: JOB_QUEUE_DATA_SOURCE, inject: [JobQueueConnection], useFactory: (c: JobQueueConnection) => c.dataSource },
    JobHandlerRegistry,
    JobHandlerExplorer,
    ClaimService,
    JobQueueService,
    JobQueryService,
    JobAdminService,
    JobLogService,
    PauseService,
    PausedWork,
    JobQueueEvents,
    FinalizeService,
    SlicedPromotions,
    SchedulerService,
    SweepsService,
    PgNotifyListener,
    SettledNotifier,
    JobWaiters,
    JobQueueOrchestrator,
    ShutdownClock,
    RecurringExplorer,
    RecurringService,
    JobArgsValidator,
    jobRefProvider,
    AppTransactionGuard,
    JobLifecycle,
    JobEventExplorer,
    WorkerVitals,
  ],
  exports: [
    JOB_REF,
    JobQueueService,
    JobWaiters,
    ClaimService,
    JobQueueDatabase,
    JOB_QUEUE_DATA_SOURCE,
    JOB_QUEUE_OPTIONS,
    JobLifecycle,
    WorkerVitals,
  ],
})
export class JobQueueModule extends ConfigurableJobQueueModule {
  static override forRoot(options: Dialect | typeof OPTIONS_TYPE): DynamicModule {
    // Validate eagerly too, so a bad literal fails at the import site with a clear message.
    const normalized = typeof options === 'string' ? { dialect: options } : options;
    resolveOptions(stripExtras(normalized));
    return super.forRoot(normalized);
  }

  static override forRootAsync(options: typeof ASYNC_OPTIONS_TYPE): DynamicModule {
    return super.forRootAsync(options);
  }
}

function stripExtras(options: typeof OPTIONS_TYPE): JobQueueModuleOptions {
  const { isGlobal: _isGlobal, ...rest } = options as typeof OPTIONS_TYPE & { isGlobal?: boolean };
  return rest;
}

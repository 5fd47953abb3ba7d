import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { JobQueueModule } from 'nestjs-sql-job-queue';
import { JobQueueDashboardModule } from 'nestjs-sql-job-queue/dashboard';
import { JobQueueHealthModule } from 'nestjs-sql-job-queue/health';
import { JobQueueMetricsModule } from 'nestjs-sql-job-queue/metrics';
import { TerminusModule } from '@nestjs/terminus';
import { FailedJobsLogger } from './observability/failed-jobs.logger';
import { HealthController } from './observability/health.controller';
import { SampleConfigModule } from './config/sample-config.module';
import { SAMPLE_CONFIG } from './config/sample-config.token';
import type { SampleConfig } from './config/sample.config';
import { DemoLoadHandlers } from './demo/demo-load.handlers';
import { DemoRunPrinter } from './demo/demo-run.printer';
import { DemoRunService } from './demo/demo-run.service';
import { sampleDashboardAuth } from './dashboard/dashboard-auth';
import { DigestHandlers } from './digest/digest.handlers';
import { JobQueueErrorsFilter } from './http/job-queue-errors.filter';
import { JobsController } from './jobs/jobs.controller';
import { StatsController } from './jobs/stats.controller';
import { PauseController } from './jobs/pause.controller';
import { PipelineService } from './reports/pipeline.service';
import { PipelinesController } from './reports/pipelines.controller';
import { ReportHandlers } from './reports/report.handlers';

/**
 * The sample application. The queue's options come from the environment through forRootAsync,
 * so DATABASE_URL picks the dialect and tests boot this very module on their own databases.
 */
@Module({
  imports: [
    SampleConfigModule,
    JobQueueModule.forRootAsync({
      imports: [SampleConfigModule],
      inject: [SAMPLE_CONFIG],
      useFactory: (config: SampleConfig) => config.queue,
    }),
    // The web UI at /dashboard; see sample-app/dashboard/dashboard-auth.ts for who may open it.
    JobQueueDashboardModule.forRootAsync({
      path: '/dashboard',
      imports: [SampleConfigModule],
      inject: [SAMPLE_CONFIG],
      useFactory: (config: SampleConfig) => ({ auth: sampleDashboardAuth(config.dashboardToken) }),
    }),
    // Prometheus text format at /metrics (prom-client's default registry), and GET /health (terminus).
    JobQueueMetricsModule.forRoot({ path: '/metrics' }),
    TerminusModule,
    JobQueueHealthModule,
  ],
  controllers: [PipelinesController, JobsController, StatsController, PauseController, HealthController],
  providers: [
    ReportHandlers,
    DigestHandlers,
    PipelineService,
    DemoLoadHandlers,
    DemoRunPrinter,
    DemoRunService,
    FailedJobsLogger,
    // Registered here rather than in main.ts so that a test booting AppModule gets it too.
    { provide: APP_FILTER, useClass: JobQueueErrorsFilter },
  ],
})
export class AppModule {}

import { Module, type DynamicModule } from '@nestjs/common';
import { JOB_QUEUE_INSTRUMENTATION } from '../instrumentation/job-queue.instrumentation';
import { OpenTelemetryJobQueueInstrumentation } from './open-telemetry.instrumentation';
import type { JobQueueTracingOptions } from './tracing.options';

/**
 * `JobQueueTracingModule.forRoot()` next to `JobQueueModule.forRoot(...)`: OpenTelemetry spans
 * for enqueues and attempts, through the global tracer provider your SDK registers (or the one
 * you pass). Global, so the queue finds it wherever it is imported.
 */
@Module({})
export class JobQueueTracingModule {
  static forRoot(options: JobQueueTracingOptions = {}): DynamicModule {
    const instrumentation = new OpenTelemetryJobQueueInstrumentation(options); // validates now, at the import site
    return {
      module: JobQueueTracingModule,
      global: true,
      providers: [{ provide: JOB_QUEUE_INSTRUMENTATION, useValue: instrumentation }],
      exports: [JOB_QUEUE_INSTRUMENTATION],
    };
  }
}

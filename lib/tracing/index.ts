/** `nestjs-sql-job-queue/tracing`: OpenTelemetry spans for enqueues and attempts (peer: @opentelemetry/api). */
export { JobQueueTracingModule } from './job-queue-tracing.module';
export { OpenTelemetryJobQueueInstrumentation } from './open-telemetry.instrumentation';
export { InvalidTracingOptionError, type JobQueueTracingOptions } from './tracing.options';
export { ATTR as JOB_QUEUE_SPAN_ATTRIBUTES, MESSAGING_SYSTEM } from './tracing.attributes';

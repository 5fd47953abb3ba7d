import { Module, type DynamicModule, type OnApplicationShutdown, type Type } from '@nestjs/common';
import type { SampleTracingTarget } from '../config/sample.config';

/** OpenTelemetry set up for the sample app: the module to boot, and the flush for shutdown. */
export interface SampleTracing {
  /** The app module with `JobQueueTracingModule.forRoot()` beside it. */
  module(app: Type): DynamicModule;
  /** Where the spans go, for the start-up line. */
  readonly where: string;
  /** Ends the SDK: spans still batched are exported (the app's shutdown does it, after the queue's). */
  shutdown(): Promise<void>;
}

@Module({})
class TracedSampleAppModule {}

/** The root module's shutdown hook runs after the imported modules' (the queue's last attempts included). */
class TracingShutdown implements OnApplicationShutdown {
  constructor(private readonly tracing: Pick<SampleTracing, 'shutdown'>) {}

  onApplicationShutdown(): Promise<void> {
    return this.tracing.shutdown();
  }
}

/**
 * SAMPLE_TRACING set: an SDK as an application sets one up (global tracer provider, the
 * AsyncLocalStorage context manager, the W3C propagator; what NodeSDK registers), spans batched
 * to the console or a file, and the queue's tracing module. Everything OpenTelemetry is loaded
 * here, on demand: with SAMPLE_TRACING unset the app never imports it, and neither does the core.
 */
export async function startSampleTracing(target: SampleTracingTarget): Promise<SampleTracing> {
  const [{ context, propagation, trace }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, sdk, { JobQueueTracingModule }, { SpanFileExporter }] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/sdk-trace-base'),
      import('nestjs-sql-job-queue/tracing'),
      import('./span-file.exporter'),
    ]);
  const exporter = target.exporter === 'console' ? new sdk.ConsoleSpanExporter() : new SpanFileExporter(target.path);
  const provider = new sdk.BasicTracerProvider({ spanProcessors: [new sdk.BatchSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  let ended: Promise<void> | undefined;
  const tracing: SampleTracing = {
    where: target.exporter === 'console' ? 'the console' : target.path,
    module: (app) => ({
      module: TracedSampleAppModule,
      imports: [app, JobQueueTracingModule.forRoot()],
      providers: [{ provide: TracingShutdown, useValue: new TracingShutdown(tracing) }],
    }),
    shutdown: () =>
      (ended ??= provider.shutdown().then(() => {
        trace.disable();
        propagation.disable();
        context.disable();
      })),
  };
  return tracing;
}

import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

/** Counts what it is handed and sends it nowhere: the SDK's whole cost, without a network. */
class CountingExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (result: { code: ExportResultCode }) => void): void {
    this.exported += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

/**
 * A real SDK set up as an application would (global tracer provider, async-hooks context
 * manager, W3C propagator), its spans batched (BatchSpanProcessor at its defaults) to an exporter
 * that drops them. Installed for one measured run and removed after it, so untraced runs pay
 * nothing for it (the AsyncLocalStorage context manager costs every promise of the process).
 */
export function installBenchTracing(sampleRatio = 1): { exporter: CountingExporter; uninstall(): Promise<void> } {
  const exporter = new CountingExporter();
  // Below 1: the usual production head sampling, a ratio of new traces (and their children).
  const sampler = sampleRatio < 1 ? new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(sampleRatio) }) : undefined;
  const provider = new BasicTracerProvider({ sampler, spanProcessors: [new BatchSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    exporter,
    async uninstall() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

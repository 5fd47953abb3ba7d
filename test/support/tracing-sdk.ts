import { context, propagation, trace, type SpanContext } from '@opentelemetry/api';
import { AsyncHooksContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** What the specs compare of a finished span (also what a worker process sends back). */
export interface SpanRecord {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, unknown> }>;
  status: { code: number; message?: string };
  events: string[];
}

/**
 * An SDK as an application sets one up (global provider, async-hooks context manager, W3C
 * propagator), with spans kept in memory. `shutdown()` removes the globals again.
 */
export function installTracingSdk(): { exporter: InMemorySpanExporter; spans(): SpanRecord[]; shutdown(): Promise<void> } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncHooksContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    exporter,
    spans: () => exporter.getFinishedSpans().map(toRecord),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

export function toRecord(span: ReadableSpan): SpanRecord {
  const ctx: SpanContext = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    attributes: { ...span.attributes },
    links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: { ...(l.attributes ?? {}) } })),
    status: { code: span.status.code, message: span.status.message },
    events: span.events.map((e) => e.name),
  };
}

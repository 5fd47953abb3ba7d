import { appendFileSync } from 'node:fs';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * SAMPLE_TRACING=file:<path>: one JSON line per finished span, appended to a file, so that the
 * terminal keeps the demo's live view and the spans can be read (or grepped) afterwards. In
 * production you would export to a collector instead (README, Tracing).
 */
export class SpanFileExporter implements SpanExporter {
  constructor(private readonly path: string) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      appendFileSync(this.path, spans.map((s) => JSON.stringify(spanLine(s)) + '\n').join(''));
      done({ code: 0 }); // ExportResultCode.SUCCESS, without loading @opentelemetry/core for an enum
    } catch (err) {
      done({ code: 1, error: err as Error });
    }
  }

  async shutdown(): Promise<void> {}
}

/** What a reader of the file needs of a span: ids, parent, links (the DAG), attributes, outcome. */
export function spanLine(span: ReadableSpan) {
  const { traceId, spanId } = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    traceId,
    spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    start: new Date(span.startTime[0] * 1000 + span.startTime[1] / 1e6).toISOString(),
    durationMs: span.duration[0] * 1000 + span.duration[1] / 1e6,
    attributes: span.attributes,
    links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: l.attributes })),
    status: span.status,
  };
}

import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { context, createTraceState, propagation, ProxyTracerProvider, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryJobQueueInstrumentation } from '../../lib/tracing/open-telemetry.instrumentation';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { readStoredCreation, storedCarrier, storedCreation } from '../../lib/instrumentation/stored-trace';
import { extractContext, injectCarrier, linkedSpanContext, MAX_CARRIER_LENGTH, parseTraceparent, spanCarrier, w3cFields } from '../../lib/tracing/trace-carrier';
import { attemptOutcome, producerSpanName } from '../../lib/tracing/tracing.attributes';
import { InvalidTracingOptionError, resolveTracingOptions } from '../../lib/tracing/tracing.options';
import { MAX_UPSTREAM_LINKS } from '../../lib/instrumentation/upstream-links';
import { TRACE_CONTEXTS_SQL_V35 } from '../../lib/migrations/postgres/1769000000002-job-queue-trace-upstream-links';

const SPAN = {
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  traceFlags: TraceFlags.SAMPLED,
  traceState: createTraceState('vendor=1,other=two'),
};

describe('trace carriers', () => {
  afterEach(() => propagation.disable());

  it('writes W3C traceparent/tracestate itself when no propagator is registered, and reads them back', () => {
    const stored = injectCarrier(trace.setSpanContext(ROOT_CONTEXT, SPAN));
    expect(JSON.parse(stored!)).toEqual({ traceparent: `00-${SPAN.traceId}-${SPAN.spanId}-01`, tracestate: 'vendor=1,other=two' });
    const back = trace.getSpanContext(extractContext(stored)!)!;
    expect(back).toMatchObject({ traceId: SPAN.traceId, spanId: SPAN.spanId, traceFlags: 1, isRemote: true });
    expect(back.traceState!.serialize()).toBe('vendor=1,other=two');
  });

  it('uses the registered propagator (what the app configured) when there is one', () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const stored = injectCarrier(trace.setSpanContext(ROOT_CONTEXT, { ...SPAN, traceFlags: TraceFlags.NONE }));
    expect(JSON.parse(stored!).traceparent).toBe(`00-${SPAN.traceId}-${SPAN.spanId}-00`);
    expect(trace.getSpanContext(extractContext(stored)!)).toMatchObject({ traceId: SPAN.traceId, spanId: SPAN.spanId, traceFlags: 0 });
  });

  it('stores nothing for a context without a valid span (no SDK)', () => {
    expect(injectCarrier(ROOT_CONTEXT)).toBeNull();
    expect(injectCarrier(context.active())).toBeNull();
    expect(injectCarrier(trace.setSpanContext(ROOT_CONTEXT, { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }))).toBeNull();
  });

  it('keeps only the W3C fields when a propagator injects more than the column holds', () => {
    propagation.setGlobalPropagator({
      inject: (_ctx, carrier: Record<string, string>) => Object.assign(carrier, { baggage: 'x'.repeat(MAX_CARRIER_LENGTH) }),
      extract: (ctx) => ctx,
      fields: () => ['baggage'],
    });
    const stored = injectCarrier(trace.setSpanContext(ROOT_CONTEXT, SPAN))!;
    expect(stored.length).toBeLessThanOrEqual(MAX_CARRIER_LENGTH);
    expect(JSON.parse(stored)).toEqual(w3cFields(SPAN));
  });

  it.each([null, undefined, '', 'not json', '42', '{}', '{"traceparent":"01-abc"}', `{"traceparent":"00-${'0'.repeat(32)}-${SPAN.spanId}-01"}`])(
    'reads nothing from %p',
    (stored) => expect(extractContext(stored as string | null)).toBeUndefined(),
  );

  it('reads nothing from a carrier longer than the column holds, however valid its traceparent', () => {
    const stored = JSON.stringify({ ...w3cFields(SPAN), pad: 'x'.repeat(MAX_CARRIER_LENGTH) });
    expect(extractContext(stored)).toBeUndefined();
    expect(linkedSpanContext(stored)).toBeUndefined();
    expect(linkedSpanContext(JSON.stringify(w3cFields(SPAN)))).toMatchObject({ traceId: SPAN.traceId });
  });

  it('parses only valid version-00 traceparents', () => {
    expect(parseTraceparent(`00-${SPAN.traceId}-${SPAN.spanId}-01`)).toMatchObject({ traceId: SPAN.traceId, traceFlags: 1 });
    expect(parseTraceparent(`00-${SPAN.traceId.toUpperCase()}-${SPAN.spanId}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${SPAN.traceId}-${'0'.repeat(16)}-01`)).toBeUndefined();
    expect(parseTraceparent(42)).toBeUndefined();
  });
});

describe('a completed attempt\'s carrier', () => {
  it('is the JSON of the W3C fields, with and without a tracestate, and reads back as the same span context', () => {
    for (const spanContext of [SPAN, { ...SPAN, traceState: undefined }, { ...SPAN, traceFlags: TraceFlags.NONE, traceState: undefined }]) {
      const stored = spanCarrier(spanContext)!;
      expect(JSON.parse(stored)).toEqual(w3cFields(spanContext));
      const back = linkedSpanContext(stored)!;
      expect({ traceId: back.traceId, spanId: back.spanId, traceFlags: back.traceFlags, state: back.traceState?.serialize() }).toEqual({
        traceId: spanContext.traceId,
        spanId: spanContext.spanId,
        traceFlags: spanContext.traceFlags,
        state: spanContext.traceState?.serialize(),
      });
    }
    expect(spanCarrier(trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }).spanContext())).toBeNull();
  });
});

describe('stored trace contexts', () => {
  const carrier = '{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}';

  it('an enqueue stores its carrier with whether the job has upstreams; a claim reads both back', () => {
    expect(readStoredCreation(storedCreation(carrier, false))).toEqual({ created: carrier, upstreams: false });
    expect(readStoredCreation(storedCreation(carrier, true))).toEqual({ created: carrier, upstreams: true });
    expect(storedCreation(null, true)).toBeNull();
    expect(storedCreation(undefined, false)).toBeNull();
  });

  it('a column that does not say (nothing stored, written before the prefix, a completed attempt\'s carrier) leaves upstreams unknown', () => {
    expect(readStoredCreation(null)).toEqual({ created: null, upstreams: undefined });
    expect(readStoredCreation(carrier)).toEqual({ created: carrier, upstreams: undefined });
  });

  it('an upstream\'s column reads as its carrier, whichever wrote it', () => {
    expect(storedCarrier(carrier)).toBe(carrier);
    expect(storedCarrier(storedCreation(carrier, true))).toBe(carrier);
    expect(storedCarrier(storedCreation(carrier, false))).toBe(carrier);
  });
});

describe('tracing names and options', () => {
  it('names producer spans by type, and a mixed graph plainly', () => {
    expect(producerSpanName(['render'])).toBe('create render');
    expect(producerSpanName(['render', 'render'])).toBe('create render');
    expect(producerSpanName(['render', 'mail'])).toBe('create');
  });

  it('tells a retried attempt from a final failure', () => {
    expect(attemptOutcome({ kind: 'done' }, 1, 3)).toBe('done');
    expect(attemptOutcome({ kind: 'failed', final: false }, 1, 3)).toBe('retrying');
    expect(attemptOutcome({ kind: 'failed', final: false }, 3, 3)).toBe('failed');
    expect(attemptOutcome({ kind: 'failed', final: true }, 1, 3)).toBe('failed');
    expect(attemptOutcome({ kind: 'aborted' }, 1, 3)).toBe('aborted');
  });

  it('records only once an SDK is behind the provider (it may register after the module starts)', () => {
    const proxy = new ProxyTracerProvider();
    const instrumentation = new OpenTelemetryJobQueueInstrumentation({ tracerProvider: proxy });
    expect(instrumentation.recording()).toBe(false);
    proxy.setDelegate(new BasicTracerProvider());
    expect(instrumentation.recording()).toBe(true);
    expect(new OpenTelemetryJobQueueInstrumentation({ tracerProvider: new BasicTracerProvider() }).recording()).toBe(true);
  });

  it('defaults, and refuses bad options with a typed error', () => {
    expect(resolveTracingOptions()).toEqual({ tracerProvider: undefined, producerSpans: 'per-call', consumerParent: 'none', logEvents: true });
    expect(resolveTracingOptions({ logEvents: false }).logEvents).toBe(false);
    expect(() => resolveTracingOptions({ logEvents: 'no' as never })).toThrow(/logEvents.*true or false/);
    expect(() => resolveTracingOptions({ producerSpans: 'each' as never })).toThrow(InvalidTracingOptionError);
    expect(() => resolveTracingOptions({ consumerParent: 'parent' as never })).toThrow(/consumerParent.*'none' or 'creation'/);
    expect(() => resolveTracingOptions({ tracerProvider: {} as never })).toThrow(/tracerProvider/);
  });
});

describe('the core and @opentelemetry/api', () => {
  it('nothing lib/index.ts imports, directly or not, imports @opentelemetry or lib/tracing', () => {
    const root = resolve('lib');
    const seen = new Set<string>();
    const offenders: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      if (file.startsWith(join(root, 'tracing'))) offenders.push(relative(root, file));
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
        const spec = m[1];
        if (spec.startsWith('@opentelemetry')) offenders.push(`${relative(root, file)} -> ${spec}`);
        if (!spec.startsWith('.')) continue;
        const base = resolve(dirname(file), spec);
        const candidates = [`${base}.ts`, join(base, 'index.ts')];
        const found = candidates.find((c) => {
          try {
            readFileSync(c);
            return true;
          } catch {
            return false;
          }
        });
        if (found) visit(found);
      }
    };
    visit(join(root, 'index.ts'));
    expect(seen.size).toBeGreaterThan(50);
    expect(offenders).toEqual([]);
  });
});

describe('upstream links read per attempt', () => {
  it('PostgreSQL migration 35 bounds job_queue_trace_contexts at MAX_UPSTREAM_LINKS, 128 links with the creation', () => {
    expect(MAX_UPSTREAM_LINKS + 1).toBe(128); // OpenTelemetry's default SpanLimits.linkCountLimit
    expect(TRACE_CONTEXTS_SQL_V35).toContain(`ORDER BY d.depends_on_id LIMIT ${MAX_UPSTREAM_LINKS})`);
  });
});

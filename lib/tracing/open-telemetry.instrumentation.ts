import {
  context,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { storableErrorText } from '../finalize/error-text';
import type { RunOutcome } from '../handlers/run-job';
import type {
  AttemptOutcome,
  AttemptTrace,
  EnqueueInstrumentation,
  InstrumentedAttempt,
  InstrumentedEnqueueJob,
  JobQueueInstrumentation,
} from '../instrumentation/job-queue.instrumentation';
import { extractContext, injectCarrier, linkedSpanContext, MAX_CARRIER_LENGTH, spanCarrier } from './trace-carrier';
import { ATTR, MESSAGING_SYSTEM, attemptOutcome, consumerSpanName, producerSpanName } from './tracing.attributes';
import { resolveTracingOptions, type JobQueueTracingOptions, type ResolvedTracingOptions } from './tracing.options';

const TRACER_NAME = 'nestjs-sql-job-queue';
/** Parsed creation carriers kept (by stored text) before the cache starts over. */
const CREATED_CACHE_SIZE = 256;
/** The SDK copies a link's attributes: one object serves every creation link. */
const CREATED_LINK_ATTRIBUTES = Object.freeze({ [ATTR.link]: 'created' });
/** What a ProxyTracerProvider delegates to until an SDK registers (the API's no-op provider). */
const NO_SDK = new ProxyTracerProvider().getDelegate();

/**
 * The queue's hooks (lib/instrumentation) on the OpenTelemetry API. Without an SDK the API's
 * tracer makes non-recording spans with no context: nothing is stored, and the queue takes its
 * untraced paths.
 */
export class OpenTelemetryJobQueueInstrumentation implements JobQueueInstrumentation {
  private readonly options: ResolvedTracingOptions;
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  /**
   * Creation carriers already parsed: with per-call producer spans (the default) every job of an
   * enqueue call stores the same carrier, and parsing it per attempt was a tenth of the attempt's
   * tracing CPU. Null: the carrier holds no valid span context.
   */
  private readonly created = new Map<string, SpanContext | null>();

  constructor(options: JobQueueTracingOptions = {}) {
    this.options = resolveTracingOptions(options);
    // The global provider is a proxy: spans go to whichever SDK registers itself, even later.
    this.provider = this.options.tracerProvider ?? trace.getTracerProvider();
    this.tracer = this.provider.getTracer(TRACER_NAME);
  }

  /** False while the provider is a proxy no SDK has registered with (it may, later). */
  recording(): boolean {
    return !(this.provider instanceof ProxyTracerProvider) || this.provider.getDelegate() !== NO_SDK;
  }

  /** A `ctx.log()` line as an event on the span active where it was logged (option `logEvents`). */
  onLog(line: { id: number; attempt: number; message: string }): void {
    if (!this.options.logEvents) return;
    const span = trace.getActiveSpan();
    if (span?.isRecording()) span.addEvent('log', { message: line.message, [ATTR.attempt]: line.attempt });
  }

  onEnqueue(jobs: readonly InstrumentedEnqueueJob[]): EnqueueInstrumentation | undefined {
    const runnable = jobs.filter((j) => !j.container);
    if (!runnable.length) return undefined;
    const parent = context.active();
    if (this.options.producerSpans === 'per-call') return this.onePerCall(jobs, runnable, parent);
    const spans: Array<Span | undefined> = new Array(jobs.length);
    const carriers: Array<string | null> = new Array(jobs.length);
    let any = false;
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i];
      if (job.container) {
        carriers[i] = null;
        continue;
      }
      const span = this.tracer.startSpan(
        producerSpanName([job.type]),
        { kind: SpanKind.PRODUCER, attributes: producerAttributes(job.type, job.group, job.ref) },
        parent,
      );
      spans[i] = span;
      carriers[i] = injectCarrier(trace.setSpan(parent, span));
      any ||= carriers[i] !== null;
    }
    if (!any) {
      // No SDK (or one that drops everything without a context): keep the enqueue untraced.
      for (const span of spans) span?.end();
      return undefined;
    }
    return {
      carriers,
      end: (ids, error) => {
        for (let i = 0; i < spans.length; i++) {
          const span = spans[i];
          if (!span) continue;
          if (ids) span.setAttribute(ATTR.messageId, String(ids[i]));
          else failed(span, error);
          span.end();
        }
      },
    };
  }

  private onePerCall(jobs: readonly InstrumentedEnqueueJob[], runnable: InstrumentedEnqueueJob[], parent: Context): EnqueueInstrumentation | undefined {
    const types = [...new Set(runnable.map((j) => j.type))];
    const attributes = producerAttributes(types.length === 1 ? types[0] : undefined, runnable.length === 1 ? runnable[0].group : undefined, undefined);
    attributes[ATTR.batchCount] = runnable.length;
    const span = this.tracer.startSpan(producerSpanName(types), { kind: SpanKind.PRODUCER, attributes }, parent);
    const carrier = injectCarrier(trace.setSpan(parent, span));
    if (carrier === null) {
      span.end();
      return undefined;
    }
    return {
      carriers: jobs.map((j) => (j.container ? null : carrier)),
      end: (ids, error) => {
        if (ids && runnable.length === 1) span.setAttribute(ATTR.messageId, String(ids[jobs.indexOf(runnable[0])]));
        if (!ids) failed(span, error);
        span.end();
      },
    };
  }

  runAttempt(job: InstrumentedAttempt, stored: AttemptTrace, run: () => Promise<RunOutcome>): Promise<AttemptOutcome> {
    const links: Link[] = [];
    const createdSpan = this.createdSpanContext(stored.created);
    if (createdSpan) links.push({ context: createdSpan, attributes: CREATED_LINK_ATTRIBUTES });
    for (const upstream of stored.upstream) {
      const spanContext = linkedSpanContext(upstream.carrier);
      if (spanContext) links.push({ context: spanContext, attributes: { [ATTR.link]: 'upstream', [ATTR.messageId]: String(upstream.id) } });
    }
    // Never the context the claim happened to run in (an enqueue's request may have woken it).
    // As a child, the whole extracted context (baggage too) is the parent.
    const parent = (this.options.consumerParent === 'creation' && extractContext(stored.created)) || ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      consumerSpanName(job.type),
      {
        kind: SpanKind.CONSUMER,
        links,
        attributes: {
          [ATTR.system]: MESSAGING_SYSTEM,
          [ATTR.operationType]: 'process',
          [ATTR.operationName]: 'process',
          [ATTR.destination]: job.type,
          [ATTR.messageId]: String(job.id),
          [ATTR.group]: job.group,
          [ATTR.attempt]: job.attempts,
          [ATTR.maxAttempts]: job.maxAttempts,
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    return context.with(active, run).then((outcome: AttemptOutcome) => {
      span.setAttribute(ATTR.outcome, attemptOutcome(outcome, job.attempts, job.maxAttempts));
      if (outcome.kind === 'failed') failed(span, outcome.cause ?? outcome.error);
      else if (outcome.kind === 'snoozed') span.setAttribute(ATTR.snoozeMs, outcome.delayMs);
      else if (outcome.kind === 'aborted') span.setAttribute(ATTR.abortReason, reasonName(outcome.reason));
      span.end();
      // The attempt's own outcome object (runJob makes one per attempt): no copy per job.
      if (outcome.kind === 'done') outcome.carrier = spanCarrier(span.spanContext());
      return outcome;
    });
  }

  private createdSpanContext(stored: string | null): SpanContext | undefined {
    // Past the column's bound it holds nothing we wrote (linkedSpanContext says so too): not kept
    // as a key, where 256 different 16 MB values written by another process were 4 GB.
    if (!stored || stored.length > MAX_CARRIER_LENGTH) return undefined;
    let spanContext = this.created.get(stored);
    if (spanContext === undefined) {
      spanContext = linkedSpanContext(stored) ?? null;
      if (this.created.size >= CREATED_CACHE_SIZE) this.created.clear();
      this.created.set(stored, spanContext);
    }
    return spanContext ?? undefined;
  }
}

function producerAttributes(type: string | undefined, group: string | undefined, ref: string | undefined): Attributes {
  const attributes: Attributes = {
    [ATTR.system]: MESSAGING_SYSTEM,
    [ATTR.operationType]: 'create',
    [ATTR.operationName]: 'create',
  };
  if (type !== undefined) attributes[ATTR.destination] = type;
  if (group !== undefined) attributes[ATTR.group] = group;
  if (ref !== undefined) attributes[ATTR.ref] = ref;
  return attributes;
}

/**
 * The attempt's error on its span, its message and stack cut as `lastError` is: a 1 MB message
 * made a 2.1 MB span (message and stack), enough to fail the exporter's whole batch (OTLP/gRPC
 * refuses messages over 4 MB by default).
 */
function failed(span: Span, error: unknown): void {
  if (error instanceof Error) {
    span.recordException({ name: error.name, message: storableErrorText(error.message), stack: error.stack === undefined ? undefined : storableErrorText(error.stack) });
  } else if (error !== undefined) span.recordException(storableErrorText(String(error)));
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error ?? 'failed');
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.split('\n')[0].slice(0, 500) });
}

function reasonName(reason: unknown): string {
  return reason instanceof Error ? reason.name : String(reason);
}

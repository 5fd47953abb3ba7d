import type { TracerProvider } from '@opentelemetry/api';
import { JobQueueError } from '../errors/job-queue.error';

export interface JobQueueTracingOptions {
  /** Where spans go; default the global provider (what `NodeSDK.start()` registers). */
  tracerProvider?: TracerProvider;
  /**
   * `per-call` (default): one PRODUCER span per `enqueue`/`enqueueGraph` call (`create <type>`,
   * or `create` for a graph of several types), whose context every job of the call stores and
   * links to; the enqueue costs the same for 1 job or 10,000. `per-job`: one PRODUCER span
   * `create <type>` per job (with its id), about 13 µs of CPU per job more at enqueue (README).
   */
  producerSpans?: 'per-job' | 'per-call';
  /**
   * `none` (default): each attempt's CONSUMER span starts a trace of its own and links to the
   * enqueue (OpenTelemetry's advice for work that runs later). `creation`: the span is also a
   * child of the enqueue's span, so a viewer shows the whole graph's run under the request that
   * enqueued it.
   */
  consumerParent?: 'none' | 'creation';
  /**
   * Each line a handler stores with `ctx.log()` is also an event `log` (attribute `message`) on
   * the span active where it logged: the attempt's span, or a span of yours inside it. The SDK
   * keeps 128 events a span by default (`spanLimits.eventCountLimit`). Default true.
   */
  logEvents?: boolean;
}

export interface ResolvedTracingOptions {
  tracerProvider?: TracerProvider;
  producerSpans: 'per-job' | 'per-call';
  consumerParent: 'none' | 'creation';
  logEvents: boolean;
}

/** A `JobQueueTracingModule.forRoot()` option is out of range. */
export class InvalidTracingOptionError extends JobQueueError {
  readonly code = 'INVALID_TRACING_OPTION';

  constructor(
    readonly option: string,
    readonly expected: string,
    readonly received: unknown,
  ) {
    super(`JobQueueTracingModule option "${option}" must be ${expected}; received ${JSON.stringify(received) ?? String(received)}.`);
  }
}

export function resolveTracingOptions(options: JobQueueTracingOptions = {}): ResolvedTracingOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidTracingOptionError('(options)', 'an object', options);
  const producerSpans = options.producerSpans ?? 'per-call';
  if (producerSpans !== 'per-job' && producerSpans !== 'per-call') {
    throw new InvalidTracingOptionError('producerSpans', `'per-job' or 'per-call'`, producerSpans);
  }
  const consumerParent = options.consumerParent ?? 'none';
  if (consumerParent !== 'none' && consumerParent !== 'creation') {
    throw new InvalidTracingOptionError('consumerParent', `'none' or 'creation'`, consumerParent);
  }
  const provider = options.tracerProvider;
  if (provider !== undefined && typeof (provider as { getTracer?: unknown })?.getTracer !== 'function') {
    throw new InvalidTracingOptionError('tracerProvider', 'an OpenTelemetry TracerProvider (with getTracer)', provider);
  }
  const logEvents = options.logEvents ?? true;
  if (typeof logEvents !== 'boolean') throw new InvalidTracingOptionError('logEvents', 'true or false', logEvents);
  return { tracerProvider: provider, producerSpans, consumerParent, logEvents };
}

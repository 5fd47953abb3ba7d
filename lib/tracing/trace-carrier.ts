import {
  createTraceState,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  trace,
  type Context,
  type SpanContext,
} from '@opentelemetry/api';

/** The longest carrier stored (the `trace_context` column's documented bound). */
export const MAX_CARRIER_LENGTH = 4_000;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The stored form of a span's context: the JSON of what the app's propagator injects (W3C
 * `traceparent`/`tracestate`, plus baggage or whatever else it is configured with). When no
 * propagator is registered (an SDK set up without one) the W3C fields are written directly, so
 * links still work. Null for a context without a valid span (no SDK: nothing is stored).
 */
export function injectCarrier(ctx: Context): string | null {
  const spanContext = trace.getSpanContext(ctx);
  if (!spanContext || !isSpanContextValid(spanContext)) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  if (!carrier.traceparent) Object.assign(carrier, w3cFields(spanContext));
  const json = JSON.stringify(carrier);
  return json.length <= MAX_CARRIER_LENGTH ? json : JSON.stringify(w3cFields(spanContext));
}

/** The context a stored carrier describes, or undefined if it holds no valid span context. */
export function extractContext(stored: string | null | undefined): Context | undefined {
  const fields = parseCarrier(stored);
  if (!fields) return undefined;
  let ctx = propagation.extract(ROOT_CONTEXT, fields);
  if (!trace.getSpanContext(ctx)) {
    const parsed = parseTraceparent(fields.traceparent, fields.tracestate);
    if (parsed) ctx = trace.setSpanContext(ctx, parsed);
  }
  const spanContext = trace.getSpanContext(ctx);
  return spanContext && isSpanContextValid(spanContext) ? ctx : undefined;
}

/**
 * A completed attempt's carrier: only the W3C fields, written directly. Its sole reader is a
 * dependent's link (a span context, no baggage), and the propagation API's inject was a fifth
 * of the attempt's tracing CPU.
 */
export function spanCarrier(spanContext: SpanContext): string | null {
  if (!isSpanContextValid(spanContext)) return null;
  // Ids are valid hex (checked above): the JSON needs no escaping unless there is a tracestate.
  if (spanContext.traceState?.serialize()) return JSON.stringify(w3cFields(spanContext));
  return `{"traceparent":"00-${spanContext.traceId}-${spanContext.spanId}-${flagsHex(spanContext.traceFlags)}"}`;
}

/**
 * The span context a stored carrier names, for a link: W3C fields parsed directly (what this
 * module writes, whatever the propagator), else through the registered propagator.
 */
export function linkedSpanContext(stored: string | null | undefined): SpanContext | undefined {
  const fields = parseCarrier(stored);
  if (!fields) return undefined;
  const direct = parseTraceparent(fields.traceparent, fields.tracestate);
  if (direct) return direct;
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, fields));
  return spanContext && isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** W3C Trace Context fields of a span context. */
export function w3cFields(spanContext: SpanContext): Record<string, string> {
  const fields: Record<string, string> = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flagsHex(spanContext.traceFlags)}` };
  const state = spanContext.traceState?.serialize();
  if (state) fields.tracestate = state;
  return fields;
}

function flagsHex(traceFlags: number): string {
  // Sampled or not: the two values every span has, without formatting a number per carrier.
  if (traceFlags === 1) return '01';
  if (traceFlags === 0) return '00';
  return (traceFlags & 0xff).toString(16).padStart(2, '0');
}

/** A remote span context from W3C fields, or undefined if `traceparent` is not version 00 and valid. */
export function parseTraceparent(traceparent: unknown, tracestate?: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const m = TRACEPARENT.exec(traceparent.trim());
  if (!m) return undefined;
  const spanContext: SpanContext = {
    traceId: m[1],
    spanId: m[2],
    traceFlags: parseInt(m[3], 16),
    isRemote: true,
    traceState: typeof tracestate === 'string' && tracestate ? createTraceState(tracestate) : undefined,
  };
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

/**
 * A stored carrier's fields; undefined for nothing stored, bad JSON, anything but an object, or
 * more than the column's bound (MAX_CARRIER_LENGTH, all this module writes): another process's
 * oversized value is not parsed on every attempt that reads it.
 */
function parseCarrier(stored: string | null | undefined): Record<string, unknown> | undefined {
  if (!stored || stored.length > MAX_CARRIER_LENGTH) return undefined;
  try {
    const carrier: unknown = JSON.parse(stored);
    return typeof carrier === 'object' && carrier !== null ? (carrier as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How the core stores an enqueue's carrier in `trace_context`: prefixed with whether the job has
 * upstreams, so that a traced claim, which returns the column with the claimed rows, knows without
 * a second statement whether the attempt has upstream carriers to read. A job without upstreams
 * (most jobs) then costs no read at all after its claim; only jobs with upstreams, and jobs whose
 * column says nothing (enqueued untraced, or by a version before this prefix), are read in a batch.
 *
 * A completed attempt's carrier (written by the finalize) is stored as the instrumentation gave
 * it: its only reader is a dependent's upstream link. Whatever an instrumentation's carriers look
 * like, the prefix is the core's: it is removed before a carrier is handed back.
 */
const NO_UPSTREAMS = 'u0:';
const UPSTREAMS = 'u1:';

/** A job's own stored carrier as a claim returns it. */
export interface StoredCreation {
  /** The enqueue's carrier, as the instrumentation gave it (null: none stored). */
  created: string | null;
  /** Whether the job has upstreams; undefined when the stored value does not say. */
  upstreams: boolean | undefined;
}

/** The value written at enqueue for a job's carrier. */
export function storedCreation(carrier: string | null | undefined, hasUpstreams: boolean): string | null {
  if (carrier == null) return null;
  return (hasUpstreams ? UPSTREAMS : NO_UPSTREAMS) + carrier;
}

/** A job's `trace_context` as read with its claim. */
export function readStoredCreation(stored: unknown): StoredCreation {
  if (stored == null) return { created: null, upstreams: undefined };
  const text = String(stored);
  if (text.startsWith(NO_UPSTREAMS)) return { created: text.slice(NO_UPSTREAMS.length), upstreams: false };
  if (text.startsWith(UPSTREAMS)) return { created: text.slice(UPSTREAMS.length), upstreams: true };
  // Written before the prefix (or a completed attempt's carrier): a carrier, upstreams unknown.
  return { created: text, upstreams: undefined };
}

/** Any stored `trace_context` (an enqueue's or a completed attempt's) as the carrier it holds. */
export function storedCarrier(stored: unknown): string {
  return readStoredCreation(stored).created!;
}

/** The first probe after the pool was lowered, and the unit of the back-off. */
export const FIRST_PROBE_MS = 1_000;
/** The longest wait between probes the server refuses: one refused connection per worker per this, at most. */
export const MAX_PROBE_MS = 30_000;
/** Between accepted probes: the pool climbs one connection per step. */
export const STEP_PROBE_MS = 250;

/**
 * How long the pool waits before it probes the server for one more connection. After an
 * accepted probe, a short step; after `refusals` refusals in this episode (probes refused, or a
 * raised limit the server refused the pool), FIRST_PROBE_MS doubling up to MAX_PROBE_MS. Spread
 * by ±25% (`random` in [0, 1)) so that replicas lowered by the same spike do not probe in step.
 */
export function poolProbeDelayMs(refusals: number, accepted: boolean, random: number = Math.random()): number {
  const base = accepted ? STEP_PROBE_MS : Math.min(MAX_PROBE_MS, FIRST_PROBE_MS * 2 ** Math.max(0, refusals));
  return Math.round(base * (0.75 + 0.5 * random));
}

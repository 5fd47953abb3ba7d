/**
 * Stand-in for the tenants' data sources: deterministic numbers and latencies derived from the
 * names, so a run is reproducible and a test can predict it, with no network.
 */
export const DEFAULT_SOURCES = ['crm', 'billing', 'support'] as const;

/** The source whose API "drops the first request of every run": its fetch fails once, then succeeds. */
export const FLAKY_SOURCE = 'billing';

/**
 * The source that prepares its data as an export: a fetch's first request starts it and is told
 * to come back in EXPORT_READY_MS (the fetch snoozes); the request after that gets the rows.
 */
export const EXPORT_SOURCE = 'support';
export const EXPORT_READY_MS = 800;

/** Amounts a source returns for a tenant: five integers from 10 to 99. */
export function sourceRows(tenant: string, source: string): number[] {
  let seed = hash(`${tenant}/${source}`);
  return Array.from({ length: 5 }, () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return 10 + (seed % 90);
  });
}

/** Simulated fetch latency, 300–800 ms: long enough to see the tenants share the workers. */
export function sourceLatencyMs(source: string): number {
  return 300 + (hash(source) % 501);
}

function hash(text: string): number {
  let h = 2_166_136_261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16_777_619) >>> 0;
  return h;
}

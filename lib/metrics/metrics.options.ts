import type { Registry } from 'prom-client';
import { InvalidOptionError } from '../errors';

export interface JobQueueMetricsOptions {
  /** Where the metrics are registered. Default: prom-client's global registry (what @willsoto/nestjs-prometheus serves). */
  registry?: Registry;
  /** Serve the registry's text format here (e.g. '/metrics'). Default: not served (your own endpoint serves the registry). */
  path?: string;
  /** Add a `group` label to the counters and histograms. Off by default: groups (tenants) can be many. */
  groupLabel?: boolean;
  /** How long a scrape's database read (jobs per state, oldest ready age) is reused. Default 5000 ms. */
  cacheMs?: number;
  /** Histogram buckets in seconds for job_queue_job_duration_seconds and job_queue_job_wait_seconds. */
  buckets?: number[];
}

export interface ResolvedMetricsOptions {
  registry?: Registry;
  path: string | null;
  groupLabel: boolean;
  cacheMs: number;
  buckets: number[];
}

export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export function resolveMetricsOptions(o: JobQueueMetricsOptions = {}): ResolvedMetricsOptions {
  if (o.path !== undefined && (typeof o.path !== 'string' || !/^\/?[\w\-./]*$/.test(o.path))) {
    throw new InvalidOptionError('metrics.path', "a URL path such as '/metrics'", o.path);
  }
  if (o.groupLabel !== undefined && typeof o.groupLabel !== 'boolean') throw new InvalidOptionError('metrics.groupLabel', 'true or false', o.groupLabel);
  const cacheMs = o.cacheMs ?? 5_000;
  if (!Number.isInteger(cacheMs) || cacheMs < 0 || cacheMs > 3_600_000) throw new InvalidOptionError('metrics.cacheMs', 'an integer from 0 to 3600000', o.cacheMs);
  const buckets = o.buckets ?? DEFAULT_BUCKETS;
  if (!Array.isArray(buckets) || !buckets.length || buckets.some((b, i) => typeof b !== 'number' || !(b > 0) || (i > 0 && b <= buckets[i - 1]))) {
    throw new InvalidOptionError('metrics.buckets', 'increasing positive numbers (seconds)', o.buckets);
  }
  return { registry: o.registry, path: o.path ?? null, groupLabel: o.groupLabel ?? false, cacheMs, buckets };
}

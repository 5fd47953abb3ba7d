/** Small statistics helpers: percentiles of samples, and median/min/max across runs. */

export function percentile(values: readonly number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest-rank on a 0..n-1 scale with linear interpolation.
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function spread(values: readonly number[]): Spread | undefined {
  const ok = values.filter((v) => Number.isFinite(v));
  if (!ok.length) return undefined;
  return { median: median(ok), min: Math.min(...ok), max: Math.max(...ok), n: ok.length };
}

/** Collects one named metric per run for several systems/configurations. */
export class RunSeries {
  private readonly values = new Map<string, number[]>();

  add(metric: string, value: number): void {
    if (!this.values.has(metric)) this.values.set(metric, []);
    this.values.get(metric)!.push(value);
  }

  get(metric: string): Spread | undefined {
    return spread(this.values.get(metric) ?? []);
  }
}

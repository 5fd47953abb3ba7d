import type { Spread } from './stats';

/** Number formatting for tables: thousands separators, fixed decimals. */
export function num(value: number, decimals = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** "median (min–max)", or just the median when there was one run. */
export function cell(s: Spread | undefined, decimals = 0, unit = ''): string {
  if (!s) return 'n/a';
  const m = num(s.median, decimals) + unit;
  return s.n > 1 && s.min !== s.max ? `${m} (${num(s.min, decimals)}–${num(s.max, decimals)})` : m;
}

export function ratio(ours: number | undefined, theirs: number | undefined): string {
  if (ours === undefined || theirs === undefined || !theirs || !Number.isFinite(ours / theirs)) return 'n/a';
  return `${num(ours / theirs, 2)}×`;
}

export function mb(bytes: number): number {
  return bytes / (1024 * 1024);
}

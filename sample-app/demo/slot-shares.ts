import type { JobView } from 'nestjs-sql-job-queue';

export interface SlotShare {
  tenant: string;
  weight: number;
  /** Jobs of this tenant started while every tenant still had load waiting. */
  started: number;
  /** Its share of those starts, 0–1. */
  share: number;
  /** What its weight entitles it to, 0–1. */
  expected: number;
}

/**
 * How the slots were shared while every tenant had work waiting: up to the moment the first
 * tenant started its last load job, count each tenant's job starts. After that moment only the
 * others have work, so they take every slot, which says nothing about fairness.
 */
export function slotShares(load: readonly JobView[], jobs: readonly JobView[], weights: Record<string, number>): SlotShare[] {
  const tenants = [...new Set(load.map((j) => j.group))].sort();
  const lastStart = tenants.map((t) => Math.max(...load.filter((j) => j.group === t).map((j) => j.startedAt?.getTime() ?? Infinity)));
  const until = Math.min(...lastStart);
  if (!Number.isFinite(until)) return [];
  const started = tenants.map((t) => jobs.filter((j) => j.group === t && j.startedAt !== null && j.startedAt.getTime() <= until).length);
  const total = started.reduce((a, b) => a + b, 0) || 1;
  const weightSum = tenants.reduce((a, t) => a + (weights[t] ?? 1), 0);
  return tenants.map((tenant, i) => ({
    tenant,
    weight: weights[tenant] ?? 1,
    started: started[i],
    share: started[i] / total,
    expected: (weights[tenant] ?? 1) / weightSum,
  }));
}

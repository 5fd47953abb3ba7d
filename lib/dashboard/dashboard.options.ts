import type { FactoryProvider, ModuleMetadata } from '@nestjs/common';
import { DashboardAuthRequiredError, InvalidDashboardOptionsError } from './dashboard.errors';

/**
 * Decides whether a request may see the dashboard. Gets the platform's request object (Express:
 * `req.headers`, `req.user` set by your passport middleware, `req.socket`…). Throwing counts as a
 * denial.
 */
export type DashboardAuth = (req: any) => boolean | Promise<boolean>;

/** Opt-out of authentication, written out on purpose: anyone who reaches the app sees the dashboard. */
export const DASHBOARD_PUBLIC = 'public';

export interface JobQueueDashboardOptions {
  /** Where the dashboard is served, below any global prefix. Default `/queue`. */
  path?: string;
  /** Required: a function deciding per request, or `'public'`. Missing: `DashboardAuthRequiredError` at start-up. */
  auth: DashboardAuth | typeof DASHBOARD_PUBLIC;
  /** No actions: buttons hidden and every action refused on the server (403). Default false. */
  readOnly?: boolean;
  /** How long one snapshot of the overview or a graph is shared by all open pages, in ms. Default 1000. */
  snapshotTtlMs?: number;
}

export interface JobQueueDashboardAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** The dashboard's path is needed to declare its routes, before any factory runs. Default `/queue`. */
  path?: string;
  inject?: FactoryProvider['inject'];
  useFactory: (...args: any[]) => Omit<JobQueueDashboardOptions, 'path'> | Promise<Omit<JobQueueDashboardOptions, 'path'>>;
}

export interface ResolvedDashboardOptions {
  path: string;
  /** null: public. */
  auth: DashboardAuth | null;
  readOnly: boolean;
  snapshotTtlMs: number;
  /** Sent with `WWW-Authenticate` when `auth` denies (set by `basicAuth`). */
  challenge: string | null;
}

const KNOWN = ['path', 'auth', 'readOnly', 'snapshotTtlMs'];

/** `/queue/` → `queue`; refuses anything but plain path segments (pure). */
export function normalizeDashboardPath(raw: unknown): string {
  if (raw === undefined) return 'queue';
  const expected = 'a URL path of letters, digits, "-", "_", "." and "/" (such as "/queue")';
  if (typeof raw !== 'string') throw new InvalidDashboardOptionsError('path', expected, raw);
  const path = raw.replace(/^\/+|\/+$/g, '');
  if (!path || path.length > 200 || !/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/.test(path) || path.split('/').some((s) => /^\.+$/.test(s))) {
    throw new InvalidDashboardOptionsError('path', expected, raw);
  }
  return path;
}

/** Validates the options (pure): a missing `auth` is an error, never a silent default. */
export function resolveDashboardOptions(raw: unknown, path?: unknown): ResolvedDashboardOptions {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new DashboardAuthRequiredError(raw);
  const o = raw as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KNOWN.includes(key)) throw new InvalidDashboardOptionsError(key, `one of ${KNOWN.join(', ')} (unknown option)`, key);
  }
  if (o.auth !== DASHBOARD_PUBLIC && typeof o.auth !== 'function') throw new DashboardAuthRequiredError(o.auth);
  if (o.readOnly !== undefined && typeof o.readOnly !== 'boolean') throw new InvalidDashboardOptionsError('readOnly', 'a boolean', o.readOnly);
  const ttl = o.snapshotTtlMs ?? 1_000;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0 || ttl > 60_000) {
    throw new InvalidDashboardOptionsError('snapshotTtlMs', 'an integer from 0 to 60000', ttl);
  }
  const auth = o.auth === DASHBOARD_PUBLIC ? null : (o.auth as DashboardAuth);
  return {
    path: normalizeDashboardPath(path ?? o.path),
    auth,
    readOnly: o.readOnly === true,
    snapshotTtlMs: ttl,
    challenge: auth ? ((auth as { challenge?: string }).challenge ?? null) : null,
  };
}

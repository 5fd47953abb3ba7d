import type { JobQueueModuleOptions } from 'nestjs-sql-job-queue';

/** Everything the sample app reads from its environment, resolved once at start-up. */
export interface SampleConfig {
  queue: JobQueueModuleOptions;
  port: number;
  /** Enqueue and watch the demo pipelines on start (SAMPLE_DEMO=0 turns it off, e.g. for tests). */
  demo: boolean;
  /** DASHBOARD_TOKEN: the dashboard's password (HTTP Basic, any user name); null = loopback clients only. */
  dashboardToken: string | null;
  /**
   * SAMPLE_TRACING: where OpenTelemetry spans go (`console`, or `file:<path>` for one JSON line per
   * span); null (unset, `0`, `off`) = no tracing, and nothing of OpenTelemetry is loaded.
   */
  tracing: SampleTracingTarget | null;
}

export type SampleTracingTarget = { exporter: 'console' } | { exporter: 'file'; path: string };

/**
 * Fair-share weights per tenant (the group key). The demo tenants differ so the live view shows
 * acme taking about three slots for each one globex gets while both have work ready.
 */
export const TENANT_WEIGHTS: Record<string, number> = { acme: 3, globex: 1 };

const SQLITE_DEFAULT = './jobs.sqlite';

/**
 * Reads DATABASE_URL (unset: the embedded SQLite file), PORT, SAMPLE_DEMO, DASHBOARD_TOKEN and SAMPLE_TRACING. The dialect follows
 * the URL's scheme, so switching databases needs no code change.
 */
export function loadSampleConfig(env: NodeJS.ProcessEnv = process.env): SampleConfig {
  return {
    queue: {
      ...databaseOptions(env.DATABASE_URL),
      // Small demo values: a few slots so fair share is visible, quick polls so the view moves.
      concurrency: 4,
      pollIntervalMs: 200,
      groupWeights: TENANT_WEIGHTS,
      // The mail provider behind `notify` accepts 2 messages per second, whatever the number of
      // replicas: a cluster-wide rate limit, enforced in the claim (a held-back notify stays ready).
      rateLimits: { types: { notify: { limit: 2, intervalMs: 1_000 } } },
      // Short backoff so the flaky fetch's second attempt comes within a second.
      retryBackoff: { baseMs: 300, maxMs: 2_000 },
      shutdownGraceMs: 5_000,
    },
    port: parsePort(env.PORT),
    demo: env.SAMPLE_DEMO !== '0' && env.SAMPLE_DEMO !== 'false',
    dashboardToken: parseDashboardToken(env.DASHBOARD_TOKEN),
    tracing: parseTracing(env.SAMPLE_TRACING),
  };
}

function parseTracing(raw: string | undefined): SampleTracingTarget | null {
  const value = raw?.trim() ?? '';
  if (value === '' || value === '0' || value.toLowerCase() === 'off' || value.toLowerCase() === 'false') return null;
  if (value.toLowerCase() === 'console') return { exporter: 'console' };
  if (value.startsWith('file:') && value.length > 'file:'.length) return { exporter: 'file', path: value.slice('file:'.length) };
  throw new Error(`SAMPLE_TRACING must be console, file:<path> (one JSON line per span) or off; received "${value}".`);
}

function databaseOptions(url: string | undefined): Pick<JobQueueModuleOptions, 'dialect' | 'url'> {
  if (url === undefined || url.trim() === '') return { dialect: 'sqlite', url: SQLITE_DEFAULT };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'postgres':
    case 'postgresql':
      return { dialect: 'postgres', url };
    case 'mysql':
    case 'mariadb':
      return { dialect: 'mysql', url };
    case 'sqlite':
      // sqlite:./jobs.sqlite, sqlite:/abs/path.sqlite or sqlite:///abs/path.sqlite
      return { dialect: 'sqlite', url: url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') || SQLITE_DEFAULT };
    default:
      // Only the scheme is echoed: the rest of a URL may hold a password.
      throw new Error(
        `DATABASE_URL has ${scheme ? `the unsupported scheme "${scheme}:"` : 'no scheme'}; use postgres://user@host/db, ` +
          `mysql://user@host/db (MySQL 8+ or MariaDB 10.6+), sqlite:./file.sqlite, or leave it unset for ${SQLITE_DEFAULT}.`,
      );
  }
}

function parseDashboardToken(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if (raw.length < 8) throw new Error('DASHBOARD_TOKEN must be at least 8 characters long (it is the dashboard password).');
  return raw;
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 3000;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`PORT must be an integer from 0 to 65535; received "${raw}".`);
  }
  return port;
}

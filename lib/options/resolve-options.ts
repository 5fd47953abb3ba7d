import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { InvalidOptionError } from '../errors';
import {
  DIALECTS,
  type Dialect,
  type JobQueueModuleOptions,
  type ResolvedJobQueueOptions,
} from '../job-queue.options';
import { MAX_TIMER_MS } from './timer-ms';

const KNOWN_OPTIONS = new Set<string>([
  'dialect', 'url', 'database', 'dataSource', 'runMigrations', 'worker', 'concurrency', 'prefetch', 'limits', 'rateLimits',
  'groupWeights', 'pollIntervalMs', 'leaseTtlMs', 'heartbeatIntervalMs', 'reclaimIntervalMs',
  'timeoutSweepIntervalMs', 'shutdownGraceMs', 'defaultMaxAttempts', 'defaultTimeoutMs', 'retryBackoff',
  'listenNotify', 'maxArgsBytes', 'maxResultBytes', 'maxGraphNodes', 'maxGraphDependencies', 'maxLogLines', 'externalTypes', 'strictTypes',
  'poolSize', 'sqliteBusyTimeoutMs', 'queryTimeoutMs',
  'workerId', 'retention', 'logging', 'events',
]);

const MiB = 1024 * 1024;

/**
 * Default `maxResultBytes` per dialect. MySQL/MariaDB send a statement as one packet of at most
 * `max_allowed_packet` (16 MiB by default on MariaDB 10.2+; 64 MiB on MySQL 8), and escaping can
 * double a JSON string in it: 4 MiB leaves room for that and the rest of a batch. PostgreSQL
 * (1 GB per value) and SQLite (1e9 bytes) allow far more; 16 MiB keeps a dependent's
 * `ctx.upstream()` read and the worker's memory reasonable.
 */
export const DEFAULT_MAX_RESULT_BYTES: Record<Dialect, number> = { mysql: 4 * MiB, postgres: 16 * MiB, sqlite: 16 * MiB };
/** Above this a JavaScript string of the JSON is near V8's limit and a batch near PostgreSQL's 1 GB. */
export const MAX_RESULT_BYTES_CEILING = 256 * MiB;

/**
 * Applies defaults and validates every option, so that a typo or a bad value fails the
 * application at start-up with the option's name, rather than later in a tick.
 */
export function resolveOptions(input: Dialect | JobQueueModuleOptions | undefined): ResolvedJobQueueOptions {
  const raw: Partial<JobQueueModuleOptions> =
    typeof input === 'string' ? { dialect: input } : input == null ? {} : input;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new InvalidOptionError('(options)', `a dialect name (${DIALECTS.join(', ')}) or an options object`, raw);
  }
  for (const name of Object.keys(raw)) {
    if (!KNOWN_OPTIONS.has(name)) {
      throw new InvalidOptionError(name, `one of the documented options (${[...KNOWN_OPTIONS].join(', ')})`, name);
    }
  }

  const dialect = raw.dialect;
  if (!DIALECTS.includes(dialect as Dialect)) {
    throw new InvalidOptionError('dialect', `one of ${DIALECTS.map((d) => `'${d}'`).join(', ')}`, dialect);
  }
  const url = optionalString(raw, 'url');
  const database = optionalString(raw, 'database');
  const dataSource = raw.dataSource;
  if (dataSource !== undefined && !isDataSource(dataSource)) {
    throw new InvalidOptionError('dataSource', 'a TypeORM DataSource', dataSource);
  }
  if (dataSource) {
    const type = (dataSource.options as { type?: string }).type;
    const expected = dialect === 'postgres' ? ['postgres'] : dialect === 'mysql' ? ['mysql', 'mariadb'] : ['better-sqlite3'];
    if (!expected.includes(type ?? '')) {
      throw new InvalidOptionError('dataSource', `a DataSource of type ${expected.join(' or ')} for dialect '${dialect}'`, type);
    }
  }
  if (url !== undefined && dialect !== 'sqlite') {
    const scheme = dialect === 'postgres' ? ['postgres:', 'postgresql:'] : ['mysql:', 'mariadb:'];
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !scheme.includes(parsed.protocol)) {
      throw new InvalidOptionError('url', `a ${scheme.map((s) => `${s}//`).join(' or ')} URL for dialect '${dialect}'`, url);
    }
  }
  if (dialect !== 'sqlite' && !dataSource && url === undefined && database === undefined) {
    throw new InvalidOptionError('url', `set (or "dataSource") for dialect '${dialect}'`, undefined);
  }
  if (dialect === 'sqlite' && (url ?? database) === ':memory:') {
    throw new InvalidOptionError(
      'database',
      'a file path: an in-memory SQLite database cannot be shared between connections or processes',
      ':memory:',
    );
  }

  const concurrency = int(raw, 'concurrency', 10, 1, 10_000);
  const leaseTtlMs = int(raw, 'leaseTtlMs', 30_000, 1_000, MAX_TIMER_MS);
  const heartbeatIntervalMs = int(raw, 'heartbeatIntervalMs', Math.floor(leaseTtlMs / 3), 50, MAX_TIMER_MS);
  if (heartbeatIntervalMs >= leaseTtlMs) {
    throw new InvalidOptionError('heartbeatIntervalMs', `below leaseTtlMs (${leaseTtlMs})`, heartbeatIntervalMs);
  }

  const queryTimeoutMs = int(raw, 'queryTimeoutMs', 60_000, 0, MAX_TIMER_MS);
  // Shorter, ordinary statements under load would be cut off and their connections closed.
  if (queryTimeoutMs > 0 && queryTimeoutMs < 1_000) {
    throw new InvalidOptionError('queryTimeoutMs', '0 (no deadline) or at least 1000 (ms)', queryTimeoutMs);
  }

  const backoff = (raw.retryBackoff ?? {}) as Record<string, unknown>;
  if (typeof backoff !== 'object' || Array.isArray(backoff)) {
    throw new InvalidOptionError('retryBackoff', 'an object { baseMs, maxMs, factor }', backoff);
  }
  const retryBackoff = {
    baseMs: int(backoff, 'baseMs', 1_000, 0, MAX_TIMER_MS, 'retryBackoff.'),
    maxMs: int(backoff, 'maxMs', 300_000, 0, MAX_TIMER_MS, 'retryBackoff.'),
    factor: num(backoff, 'factor', 2, 1, 100, 'retryBackoff.'),
  };

  const limitsRaw = (raw.limits ?? {}) as Record<string, unknown>;
  if (typeof limitsRaw !== 'object' || Array.isArray(limitsRaw)) {
    throw new InvalidOptionError('limits', 'an object { global, groups, types }', limitsRaw);
  }
  for (const k of Object.keys(limitsRaw)) {
    if (!['global', 'groups', 'types'].includes(k)) throw new InvalidOptionError(`limits.${k}`, 'one of global, groups, types', k);
  }
  const globalLimit = limitsRaw.global === undefined ? 0 : int(limitsRaw, 'global', 0, 1, 1_000_000, 'limits.');

  return {
    dialect: dialect as Dialect,
    url,
    database,
    dataSource,
    runMigrations: bool(raw, 'runMigrations', true),
    worker: bool(raw, 'worker', true),
    concurrency,
    prefetch: int(raw, 'prefetch', concurrency, 0, 10_000),
    limits: {
      global: globalLimit,
      groups: intRecord(limitsRaw.groups, 'limits.groups'),
      types: intRecord(limitsRaw.types, 'limits.types'),
    },
    rateLimits: resolveRateLimits(raw.rateLimits),
    groupWeights: intRecord(raw.groupWeights, 'groupWeights'),
    pollIntervalMs: int(raw, 'pollIntervalMs', 1_000, 10, MAX_TIMER_MS),
    leaseTtlMs,
    heartbeatIntervalMs,
    reclaimIntervalMs: int(raw, 'reclaimIntervalMs', 5_000, 10, MAX_TIMER_MS),
    timeoutSweepIntervalMs: int(raw, 'timeoutSweepIntervalMs', 5_000, 10, MAX_TIMER_MS),
    shutdownGraceMs: int(raw, 'shutdownGraceMs', 10_000, 0, MAX_TIMER_MS),
    defaultMaxAttempts: int(raw, 'defaultMaxAttempts', 3, 1, 1_000_000),
    defaultTimeoutMs: raw.defaultTimeoutMs === undefined ? null : int(raw, 'defaultTimeoutMs', 0, 1, MAX_TIMER_MS),
    retryBackoff,
    listenNotify: bool(raw, 'listenNotify', true),
    maxArgsBytes: int(raw, 'maxArgsBytes', 1024 * 1024, 1, 1024 * 1024 * 1024),
    maxResultBytes: int(raw, 'maxResultBytes', DEFAULT_MAX_RESULT_BYTES[dialect as Dialect], 1, MAX_RESULT_BYTES_CEILING),
    maxGraphNodes: int(raw, 'maxGraphNodes', 1_000_000, 1, 100_000_000),
    maxGraphDependencies: int(raw, 'maxGraphDependencies', 5_000_000, 0, 500_000_000),
    maxLogLines: int(raw, 'maxLogLines', 1_000, 0, 100_000),
    externalTypes: stringArray(raw.externalTypes, 'externalTypes'),
    strictTypes: bool(raw, 'strictTypes', true),
    events: resolveEvents(raw.events),
    poolSize: int(raw, 'poolSize', 10, 1, 1_000),
    sqliteBusyTimeoutMs: int(raw, 'sqliteBusyTimeoutMs', 100, 0, 60_000),
    queryTimeoutMs,
    workerId: optionalString(raw, 'workerId', 128) ?? defaultWorkerId(),
    retention: resolveRetention(raw.retention),
    logging: bool(raw, 'logging', false),
  };
}

function resolveEvents(v: unknown): ResolvedJobQueueOptions['events'] {
  if (v === undefined) return { emitter: false };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InvalidOptionError('events', 'an object { emitter?: boolean }', v);
  for (const k of Object.keys(v)) if (k !== 'emitter') throw new InvalidOptionError(`events.${k}`, 'emitter', k);
  return { emitter: bool(v as Record<string, unknown>, 'emitter', false, 'events.') };
}

function resolveRetention(v: unknown): ResolvedJobQueueOptions['retention'] {
  if (v === false) return false;
  const r = (v ?? {}) as Record<string, unknown>;
  if (typeof r !== 'object' || Array.isArray(r)) {
    throw new InvalidOptionError('retention', 'false or an object { olderThanMs, mode, intervalMs, batchSize }', v);
  }
  for (const k of Object.keys(r)) {
    if (!['olderThanMs', 'mode', 'intervalMs', 'batchSize'].includes(k)) {
      throw new InvalidOptionError(`retention.${k}`, 'one of olderThanMs, mode, intervalMs, batchSize', k);
    }
  }
  if (r.mode !== undefined && r.mode !== 'delete' && r.mode !== 'archive') {
    throw new InvalidOptionError('retention.mode', `'delete' or 'archive'`, r.mode);
  }
  return {
    olderThanMs: int(r, 'olderThanMs', 7 * 24 * 3_600_000, 0, Number.MAX_SAFE_INTEGER, 'retention.'),
    mode: (r.mode as 'delete' | 'archive' | undefined) ?? 'delete',
    intervalMs: int(r, 'intervalMs', 60_000, 10, MAX_TIMER_MS, 'retention.'),
    batchSize: int(r, 'batchSize', 500, 1, 10_000, 'retention.'),
  };
}

/** `{ types: { name: { limit, intervalMs } }, groups: { … } }`, every number checked. */
function resolveRateLimits(v: unknown): ResolvedJobQueueOptions['rateLimits'] {
  if (v === undefined) return { types: {}, groups: {} };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new InvalidOptionError('rateLimits', 'an object { types, groups }', v);
  }
  const out: ResolvedJobQueueOptions['rateLimits'] = { types: {}, groups: {} };
  for (const [kind, byName] of Object.entries(v)) {
    if (kind !== 'types' && kind !== 'groups') throw new InvalidOptionError(`rateLimits.${kind}`, 'one of types, groups', kind);
    if (byName === undefined) continue;
    if (typeof byName !== 'object' || byName === null || Array.isArray(byName)) {
      throw new InvalidOptionError(`rateLimits.${kind}`, 'an object of { limit, intervalMs } keyed by name', byName);
    }
    for (const [name, rule] of Object.entries(byName as Record<string, unknown>)) {
      const path = `rateLimits.${kind}.${name}`;
      if (!name.length || name.length > 200) throw new InvalidOptionError(path, 'a name of 1 to 200 characters', name);
      refuseProtoKey(name, path);
      if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) {
        throw new InvalidOptionError(path, 'an object { limit, intervalMs }', rule);
      }
      for (const k of Object.keys(rule)) {
        if (k !== 'limit' && k !== 'intervalMs') throw new InvalidOptionError(`${path}.${k}`, 'one of limit, intervalMs', k);
      }
      if ((rule as Record<string, unknown>).limit === undefined) throw new InvalidOptionError(`${path}.limit`, 'an integer from 1 to 1000000', undefined);
      if ((rule as Record<string, unknown>).intervalMs === undefined) {
        throw new InvalidOptionError(`${path}.intervalMs`, `an integer from 1 to ${MAX_TIMER_MS}`, undefined);
      }
      out[kind][name] = {
        limit: int(rule, 'limit', 0, 1, 1_000_000, `${path}.`),
        intervalMs: int(rule, 'intervalMs', 0, 1, MAX_TIMER_MS, `${path}.`),
      };
    }
  }
  return out;
}

function defaultWorkerId(): string {
  return `${hostname().slice(0, 80)}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

function isDataSource(value: unknown): value is import('typeorm').DataSource {
  return typeof value === 'object' && value !== null && 'options' in value && 'createQueryRunner' in value;
}

function optionalString(obj: object, name: string, maxLength = 4096): string | undefined {
  const v = (obj as Record<string, unknown>)[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > maxLength) {
    throw new InvalidOptionError(name, `a non-empty string of at most ${maxLength} characters`, v);
  }
  return v;
}

function bool(obj: object, name: string, fallback: boolean, prefix = ''): boolean {
  const v = (obj as Record<string, unknown>)[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw new InvalidOptionError(prefix + name, 'true or false', v);
  return v;
}

function int(obj: object, name: string, fallback: number, min: number, max: number, prefix = ''): number {
  const v = (obj as Record<string, unknown>)[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new InvalidOptionError(prefix + name, `an integer from ${min} to ${max}`, v);
  }
  return v;
}

function num(obj: object, name: string, fallback: number, min: number, max: number, prefix = ''): number {
  const v = (obj as Record<string, unknown>)[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw new InvalidOptionError(prefix + name, `a number from ${min} to ${max}`, v);
  }
  return v;
}

function intRecord(v: unknown, name: string): Record<string, number> {
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new InvalidOptionError(name, 'an object of positive integers keyed by name', v);
  }
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(v)) {
    refuseProtoKey(k, `${name}.${k}`);
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1_000_000) {
      throw new InvalidOptionError(`${name}.${k}`, 'an integer from 1 to 1000000', n);
    }
    out[k] = n;
  }
  return out;
}

/**
 * A config parsed from JSON can name a tenant `__proto__`; stored under that key the limit set the
 * map's prototype instead, and the tenant ran unlimited (5 of 5 jobs at once under a cap of 1).
 */
function refuseProtoKey(key: string, path: string): void {
  if (key === '__proto__') throw new InvalidOptionError(path, 'a name other than __proto__, which the queue cannot key a limit or weight by', key);
}

function stringArray(v: unknown, name: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new InvalidOptionError(name, 'an array of non-empty strings', v);
  }
  return [...v];
}

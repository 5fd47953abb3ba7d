import type { DataSource } from 'typeorm';

export type Dialect = 'postgres' | 'mysql' | 'sqlite';
export const DIALECTS: readonly Dialect[] = ['postgres', 'mysql', 'sqlite'];

/** Cluster-wide caps on jobs in flight (leased or running), enforced inside the claim transaction. */
export interface JobQueueLimits {
  /** At most this many jobs in flight across every process. */
  global?: number;
  /** Per group key. */
  groups?: Record<string, number>;
  /** Per job type. */
  types?: Record<string, number>;
}

/** At most `limit` jobs claimed per `intervalMs` (a sliding window), cluster-wide. */
export interface RateLimit {
  /** Jobs per window, an integer from 1 to 1,000,000. */
  limit: number;
  /** The window, in milliseconds: an integer from 1 ms to 24 days. */
  intervalMs: number;
}

/**
 * Cluster-wide rate limits per time window, enforced inside the claim transaction next to
 * `limits` (which caps jobs in flight, not starts per window). A limited job stays `ready`
 * (no attempt counted) until its window has room again.
 */
export interface JobQueueRateLimits {
  /** Per job type. */
  types?: Record<string, RateLimit>;
  /** Per group key. */
  groups?: Record<string, RateLimit>;
}

export interface RetryBackoffOptions {
  /** Delay before the second attempt. Default 1000 ms. */
  baseMs?: number;
  /** Upper bound of any delay. Default 5 minutes. */
  maxMs?: number;
  /** Growth per attempt. Default 2. */
  factor?: number;
}

/** What happens to finished jobs, so that the table does not grow without bound. */
export interface RetentionOptions {
  /** Finished jobs older than this are removed. Default 7 days. */
  olderThanMs?: number;
  /** `delete` (default), or `archive`: move them to `jobs_archive` / `job_deps_archive`. */
  mode?: 'delete' | 'archive';
  /** Interval of the retention sweep. Default 60 s. */
  intervalMs?: number;
  /** Rows per transaction. Default 500. */
  batchSize?: number;
}

/** Options of `JobQueueModule.forRoot` / `forRootAsync`. Every field is validated at start-up. */
export interface JobQueueModuleOptions {
  dialect: Dialect;
  /** `postgres://…` or `mysql://…`; for SQLite a file path. Ignored when `dataSource` is given. */
  url?: string;
  /** SQLite file (default `./jobs.sqlite`), or the database name for postgres/mysql. */
  database?: string;
  /**
   * Share the application's TypeORM DataSource (postgres/mysql), so `enqueue(..., { manager })`
   * can join the app's transactions. For SQLite the queue opens its own connection to the same file.
   */
  dataSource?: DataSource;
  /** Run the shipped migrations at start-up. Default true. */
  runMigrations?: boolean;
  /** Claim and run jobs in this process. Default true; false makes an enqueue-only process. */
  worker?: boolean;
  /** Jobs this process runs at once. Default 10. */
  concurrency?: number;
  /**
   * Jobs claimed ahead of free slots while jobs are short (mean run under 100 ms), so claims
   * come in batches; unstarted ones are handed back after 1 s, or at shutdown. Default: concurrency.
   */
  prefetch?: number;
  /** Cluster-wide caps: the minimum of external limits (an API's rate, a licence, a budget). */
  limits?: JobQueueLimits;
  /**
   * Cluster-wide starts per time window, per type or group: `{ types: { email: { limit: 100,
   * intervalMs: 60_000 } } }`. Every process must configure the same rate limits.
   */
  rateLimits?: JobQueueRateLimits;
  /** Fair-share weight per group key; overrides the weight given at enqueue. */
  groupWeights?: Record<string, number>;
  /** Idle poll interval; a finished job or a notification claims at once. Default 1000 ms. */
  pollIntervalMs?: number;
  /** A lease not renewed for this long is reclaimed by any process. Default 30 s. */
  leaseTtlMs?: number;
  /** Lease renewal interval while a handler runs; must be below `leaseTtlMs`. Default leaseTtlMs / 3. */
  heartbeatIntervalMs?: number;
  /** Interval of the expired-lease sweep. Default 5000 ms. */
  reclaimIntervalMs?: number;
  /** Interval of the overdue-job (timeout) sweep. Default 5000 ms. */
  timeoutSweepIntervalMs?: number;
  /** On shutdown, wait this long for running jobs before aborting them and handing their leases back. Default 10 s. */
  shutdownGraceMs?: number;
  /** Attempts per job unless the job or its handler says otherwise. Default 3. */
  defaultMaxAttempts?: number;
  /** Per-attempt timeout unless the job or its handler says otherwise. Default none. */
  defaultTimeoutMs?: number;
  /** Delay between attempts: exponential with full jitter. */
  retryBackoff?: RetryBackoffOptions;
  /** Wake idle workers with LISTEN/NOTIFY (postgres only). Default true. */
  listenNotify?: boolean;
  /** Largest serialized `args` accepted. Default 1 MiB. */
  maxArgsBytes?: number;
  /**
   * Largest serialized result stored; a larger one fails its job for good with `ResultTooLargeError`.
   * Default 4 MiB on MySQL/MariaDB (fits the default 16 MiB `max_allowed_packet` even when escaping
   * doubles it), 16 MiB on PostgreSQL and SQLite.
   */
  maxResultBytes?: number;
  /**
   * Most nodes one `enqueueGraph` call takes; a bigger graph is rejected with a
   * `GraphTooLargeError` before anything is written. Default 1,000,000 (about 1 GB of RSS
   * while it is written).
   */
  maxGraphNodes?: number;
  /** Most `dependsOn` entries, summed over the nodes, of one `enqueueGraph` call. Default 5,000,000. */
  maxGraphDependencies?: number;
  /**
   * Lines one attempt of a job may write with `ctx.log()` (each cut to 2,000 characters); past
   * them one notice line is stored and the rest dropped. 0 stores none. Default 1,000.
   */
  maxLogLines?: number;
  /** Types handled by other processes, accepted by `enqueue` although no local handler exists. */
  externalTypes?: string[];
  /** Reject enqueue of types with no local handler and not in `externalTypes`. Default true. */
  strictTypes?: boolean;
  /**
   * Lifecycle events (`@OnJobEvent`). `emitter: true` also forwards each one to @nestjs/event-emitter's
   * EventEmitter2 as `job-queue.<event>` (import EventEmitterModule.forRoot() in your app). Default off.
   */
  events?: { emitter?: boolean };
  /** Connection pool size of the queue's own DataSource (postgres/mysql). Default 10. */
  poolSize?: number;
  /** SQLite busy timeout of one attempt before an async retry. Default 100 ms. */
  sqliteBusyTimeoutMs?: number;
  /**
   * PostgreSQL/MySQL: how long the queue waits for the database to answer one of its statements
   * before it gives the connection up (closes it; the pool opens a new one) and the statement
   * fails with DatabaseNoAnswerError, like one on a lost connection: the worker retries its
   * claims, renewals and finalizes. Without it a hung server, or a connection left half-open by a
   * failover, held a claim or renewal until TCP gave up (minutes), or for good. Not applied to
   * statements in an application's transaction (`{ manager }`). A new connection's handshake gets as long, at
   * most 10 s. Default 60 s; at least 1 s, or 0 to turn it off.
   */
  queryTimeoutMs?: number;
  /** Name written into `lease_owner`. Default `<hostname>:<pid>:<random>`. */
  workerId?: string;
  /** Removal of old finished jobs; `false` keeps everything. Default: delete after 7 days. */
  retention?: RetentionOptions | false;
  /** Log SQL through TypeORM's logger (own DataSource only). Default false. */
  logging?: boolean;
}

/** Options after defaults and validation; what the services read. */
export interface ResolvedJobQueueOptions {
  dialect: Dialect;
  url: string | undefined;
  database: string | undefined;
  dataSource: DataSource | undefined;
  runMigrations: boolean;
  worker: boolean;
  concurrency: number;
  prefetch: number;
  limits: Required<JobQueueLimits>;
  rateLimits: Required<JobQueueRateLimits>;
  groupWeights: Record<string, number>;
  pollIntervalMs: number;
  leaseTtlMs: number;
  heartbeatIntervalMs: number;
  reclaimIntervalMs: number;
  timeoutSweepIntervalMs: number;
  shutdownGraceMs: number;
  defaultMaxAttempts: number;
  defaultTimeoutMs: number | null;
  retryBackoff: Required<RetryBackoffOptions>;
  listenNotify: boolean;
  maxArgsBytes: number;
  maxResultBytes: number;
  maxGraphNodes: number;
  maxGraphDependencies: number;
  maxLogLines: number;
  externalTypes: string[];
  strictTypes: boolean;
  events: { emitter: boolean };
  poolSize: number;
  sqliteBusyTimeoutMs: number;
  queryTimeoutMs: number;
  workerId: string;
  retention: Required<RetentionOptions> | false;
  logging: boolean;
}

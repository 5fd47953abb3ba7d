import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { JobQueueDatabase } from '../database/job-queue.database';
import { InvalidOptionError } from '../errors';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { isTimerMs, MAX_TIMER_MS } from '../options/timer-ms';
import { WorkerVitals } from '../scheduler/worker-vitals';
import { readOldestReadyAgeMs } from '../stats/oldest-ready.sql';
import { healthVerdict } from './health-verdict';

export interface JobQueueHealthOptions {
  /** Report `degraded` when the oldest ready job has waited longer than this. Default: never. */
  maxOldestReadyAgeMs?: number;
  /** The database read counts as failed after this long. Default 3000 ms. */
  timeoutMs?: number;
}

/**
 * A @nestjs/terminus 12 health indicator for this process's queue: `down` when the database does
 * not answer, or when this process's claim loop or lease renewal has been failing for longer
 * than a lease TTL; `degraded` (HTTP 200, overall status `degraded`) when the oldest ready job
 * is older than `maxOldestReadyAgeMs`; else `up`. One read per check: the oldest ready age, a few
 * index probes per (type, priority) of the ready jobs (on MySQL a statement each), not a scan.
 */
@Injectable()
export class JobQueueHealthIndicator {
  private reading: Promise<number> | undefined;

  constructor(
    private readonly health: HealthIndicatorService,
    private readonly db: JobQueueDatabase,
    private readonly vitals: WorkerVitals,
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
  ) {}

  async isHealthy<const Key extends string>(key: Key, options: JobQueueHealthOptions = {}): Promise<HealthIndicatorResult<Key>> {
    const { maxOldestReadyAgeMs, timeoutMs = 3_000 } = options;
    if (maxOldestReadyAgeMs !== undefined && !(Number.isFinite(maxOldestReadyAgeMs) && maxOldestReadyAgeMs >= 0)) {
      throw new InvalidOptionError('maxOldestReadyAgeMs', 'a non-negative number of ms', maxOldestReadyAgeMs);
    }
    // NaN, 0 or more than 2^31 - 1 ms made the timer fire at once: "down" with the database up.
    if (!isTimerMs(timeoutMs, 1)) throw new InvalidOptionError('timeoutMs', `an integer from 1 to ${MAX_TIMER_MS} (ms)`, timeoutMs);
    const session = this.health.check(key);
    let database: Parameters<typeof healthVerdict>[0]['database'];
    try {
      database = { ok: true, oldestReadyAgeMs: await withTimeout(this.readOldestReadyAge(), timeoutMs) };
    } catch (err) {
      database = { ok: false, error: (err as Error).message };
    }
    const v = this.vitals;
    const verdict = healthVerdict({
      now: Date.now(),
      leaseTtlMs: this.options.leaseTtlMs,
      database,
      claimFailingSince: v.claimFailingSince,
      heartbeatFailingSince: v.heartbeatFailingSince,
      maxOldestReadyAgeMs,
    });
    const details = {
      ...(verdict.message ? { message: verdict.message } : {}),
      worker: v.working,
      inFlight: v.inFlight,
      lastClaimAt: iso(v.lastClaimAt),
      lastHeartbeatAt: iso(v.lastHeartbeatAt),
      oldestReadyAgeMs: database.ok ? database.oldestReadyAgeMs : null,
    };
    if (verdict.status === 'down') return session.down(details);
    if (verdict.status === 'degraded') return session.degraded(details);
    return session.up(details);
  }

  /**
   * One read at a time, shared by the checks that arrive meanwhile. A check that times out leaves
   * its read pending until the server answers: with a new read per check, a server that stopped
   * answering collected one pending statement per probe, each holding a pooled connection.
   */
  private readOldestReadyAge(): Promise<number> {
    this.reading ??= readOldestReadyAgeMs(this.db).finally(() => (this.reading = undefined));
    return this.reading;
  }
}

function iso(ms: number): string | null {
  return ms ? new Date(ms).toISOString() : null;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  work.catch(() => undefined); // a late failure after the timeout is not unhandled
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

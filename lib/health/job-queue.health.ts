import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { JobQueueDatabase } from '../database/job-queue.database';
import { InvalidOptionError } from '../errors';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { isTimerMs, MAX_TIMER_MS } from '../options/timer-ms';
import { WorkerVitals } from '../scheduler/worker-vitals';
import { CachedRead, type ReadPace } from '../stats/cached-read';
import { readOldestReadyAgeMs } from '../stats/oldest-ready.sql';
import { healthVerdict } from './health-verdict';
import { pingDatabase } from './ping.sql';

export interface JobQueueHealthOptions {
  /** Report `degraded` when the oldest ready job has waited longer than this. Default: never. */
  maxOldestReadyAgeMs?: number;
  /** The database read counts as failed after this long. Default 3000 ms. */
  timeoutMs?: number;
}

/**
 * The oldest ready age is read again at most once a second: a read of an ordinary table takes a
 * few ms, so a probe a second or more apart still gets a fresh age.
 */
export const HEALTH_AGE_MIN_MS = 1_000;
/**
 * Its read costs a few index probes per (type, priority) of the ready jobs, on MySQL a statement
 * each: 2.5-3.5 s with 5,000 types on MariaDB, and it was read again on every check (a probe every
 * few seconds on each replica kept a connection and the server busy most of the time). Kept 20
 * times as long as it took (at most 5% of the time, like the metrics gauge), at most 60 s: the
 * gauge's 15 s cap let a 3 s read take 20% of each replica's time, and a `degraded` threshold is
 * minutes, not seconds. A read that a stalled server held counts its wait as cost (up to the cap).
 */
export const HEALTH_AGE_PACE: ReadPace = { factor: 20, maxMs: 60_000 };

/**
 * A @nestjs/terminus 12 health indicator for this process's queue: `down` when the database does
 * not answer, or when this process's claim loop or lease renewal has been failing, or waiting
 * for an answer, for longer than a lease TTL; `degraded` (HTTP 200, overall status `degraded`) when the oldest ready job
 * is older than `maxOldestReadyAgeMs`; else `up`. The oldest ready age is a few index probes per
 * (type, priority) of the ready jobs (on MySQL a statement each), not a scan, paced by its cost
 * (HEALTH_AGE_PACE); a check between its reads only pings the database.
 */
@Injectable()
export class JobQueueHealthIndicator {
  /**
   * One read at a time, shared by the checks that arrive meanwhile. A check that times out leaves
   * its read pending until the server answers: with a new read per check, a server that stopped
   * answering collected one pending statement per probe, each holding a pooled connection.
   */
  private readonly oldestReady: CachedRead<MeasuredAge>;
  private pinging: Promise<void> | undefined;

  constructor(
    private readonly health: HealthIndicatorService,
    private readonly db: JobQueueDatabase,
    private readonly vitals: WorkerVitals,
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
  ) {
    this.oldestReady = new CachedRead(
      async () => {
        const at = Date.now();
        return { ageMs: await readOldestReadyAgeMs(db), at };
      },
      HEALTH_AGE_MIN_MS,
      Date.now,
      HEALTH_AGE_PACE,
    );
  }

  async isHealthy<const Key extends string>(key: Key, options: JobQueueHealthOptions = {}): Promise<HealthIndicatorResult<Key>> {
    const { maxOldestReadyAgeMs, timeoutMs = 3_000 } = options;
    if (maxOldestReadyAgeMs !== undefined && !(Number.isFinite(maxOldestReadyAgeMs) && maxOldestReadyAgeMs >= 0)) {
      throw new InvalidOptionError('maxOldestReadyAgeMs', 'a non-negative number of ms', maxOldestReadyAgeMs);
    }
    // NaN, 0 or more than 2^31 - 1 ms made the timer fire at once: "down" with the database up.
    if (!isTimerMs(timeoutMs, 1)) throw new InvalidOptionError('timeoutMs', `an integer from 1 to ${MAX_TIMER_MS} (ms)`, timeoutMs);
    const session = this.health.check(key);
    const database = await this.readDatabase(timeoutMs);
    const v = this.vitals;
    const verdict = healthVerdict({
      now: Date.now(),
      leaseTtlMs: this.options.leaseTtlMs,
      database,
      claimFailingSince: v.claimFailingSince,
      heartbeatFailingSince: v.heartbeatFailingSince,
      claimWaitingSince: v.claimWaitingSince,
      heartbeatWaitingSince: v.heartbeatWaitingSince,
      maxOldestReadyAgeMs,
    });
    const details = {
      ...(verdict.message ? { message: verdict.message } : {}),
      worker: v.working,
      inFlight: v.inFlight,
      lastClaimAt: iso(v.lastClaimAt),
      lastHeartbeatAt: iso(v.lastHeartbeatAt),
      oldestReadyAgeMs: database.ok ? database.oldestReadyAgeMs ?? null : null,
      // The age is paced (up to 60 s old): when it was read tells a fresh value from a kept one.
      oldestReadyAgeMeasuredAt: database.ok && database.measuredAt !== undefined ? iso(database.measuredAt) : null,
    };
    if (verdict.status === 'down') return session.down(details);
    if (verdict.status === 'degraded') return session.degraded(details);
    return session.up(details);
  }

  /**
   * The oldest ready age within `timeoutMs`. Its read costs a few index probes per (type,
   * priority) of the ready jobs, on MySQL a statement each: with 10,000 of them (100 types, 100
   * priorities) it took 3 s on MariaDB, and a database that answered every statement was
   * reported down. So if it has not answered by half the time, a ping asks whether the database
   * answers at all: if the ping does and the read does not by the deadline, the database is up
   * and the age is the last one read (null before the first); if neither does, it is down.
   * While the last age read is fresh under HEALTH_AGE_PACE, the ping alone says whether the
   * database answers (within `timeoutMs`), and the age is that one.
   */
  private async readDatabase(timeoutMs: number): Promise<DatabaseAnswer> {
    if (this.oldestReady.fresh) {
      const ping = tracked(this.ping());
      await waitAtMost(ping.settled, timeoutMs);
      return pingAnswer(ping, this.oldestReady.last, timeoutMs);
    }
    const age = tracked(this.oldestReady.get());
    const half = Math.max(1, Math.floor(timeoutMs / 2));
    await waitAtMost(age.settled, half);
    const ping = age.state === 'pending' ? tracked(this.ping()) : undefined;
    if (age.state === 'pending') await waitAtMost(age.settled, timeoutMs - half);
    if (age.state === 'ok') return { ok: true, oldestReadyAgeMs: age.value!.ageMs, measuredAt: age.value!.at };
    if (age.state === 'failed') return { ok: false, error: age.error!.message };
    return pingAnswer(ping!, this.oldestReady.last, timeoutMs);
  }

  /** One ping at a time, shared like the read. */
  private ping(): Promise<void> {
    this.pinging ??= pingDatabase(this.db).finally(() => (this.pinging = undefined));
    return this.pinging;
  }
}

/** An oldest ready age and when its read started (epoch ms): the age is at least that old. */
interface MeasuredAge {
  ageMs: number;
  at: number;
}

type DatabaseAnswer = { ok: true; oldestReadyAgeMs?: number; measuredAt?: number } | { ok: false; error: string };

/** What a ping, as far as it got by the deadline, says: up with the given age, or down and why. */
function pingAnswer(ping: Tracked<void>, age: MeasuredAge | undefined, timeoutMs: number): DatabaseAnswer {
  if (ping.state === 'ok') return { ok: true, oldestReadyAgeMs: age?.ageMs, measuredAt: age?.at };
  if (ping.state === 'failed') return { ok: false, error: ping.error!.message };
  return { ok: false, error: `no answer within ${timeoutMs} ms` };
}

function iso(ms: number): string | null {
  return ms ? new Date(ms).toISOString() : null;
}

interface Tracked<T> {
  state: 'pending' | 'ok' | 'failed';
  value?: T;
  error?: Error;
  /** Resolves when the work settles; never rejects (a late failure is not unhandled). */
  settled: Promise<void>;
}

function tracked<T>(work: Promise<T>): Tracked<T> {
  const t: Tracked<T> = { state: 'pending', settled: Promise.resolve() };
  t.settled = work.then(
    (value) => void Object.assign(t, { state: 'ok', value }),
    (error: unknown) => void Object.assign(t, { state: 'failed', error: error instanceof Error ? error : new Error(String(error)) }),
  );
  return t;
}

/** Resolves when `work` settles or after `ms`, whichever is first. */
async function waitAtMost(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

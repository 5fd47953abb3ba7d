import { jest } from '@jest/globals';
import { Controller, Get, Injectable, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Registry } from 'prom-client';
import { InvalidOptionError, JobContext, JobHandler, JobQueueModule, JobQueueService, type JobQueueModuleOptions } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { HEALTH_AGE_MIN_MS } from '../../lib/health/job-queue.health';
import { JobQueueHealthIndicator, JobQueueHealthModule } from 'nestjs-sql-job-queue/health';
import { JobQueueMetrics, JobQueueMetricsModule } from 'nestjs-sql-job-queue/metrics';
import { describeDialects } from '../support/describe-dialects';
import type { TestDatabase } from '../support/test-databases';
import { eventually } from '../support/wait';

@Injectable()
class WorkloadHandlers {
  @JobHandler('ob-ok')
  async ok(): Promise<number> {
    return 1;
  }

  @JobHandler('ob-flaky')
  async flaky(_args: unknown, ctx: JobContext): Promise<void> {
    if (ctx.attempt === 1) throw new Error('flaky once');
  }

  @JobHandler('ob-bad')
  async bad(): Promise<void> {
    throw new Error('always');
  }

  private readonly snoozed = new Map<number, number>();

  /** Snoozes twice, then completes: three runs on one attempt. */
  @JobHandler('ob-snoozy', { maxAttempts: 1 })
  async snoozy(_args: unknown, ctx: JobContext): Promise<void> {
    const runs = (this.snoozed.get(ctx.id) ?? 0) + 1;
    this.snoozed.set(ctx.id, runs);
    if (runs <= 2) ctx.snooze(10);
  }
}

@Controller('health')
class HealthController {
  static threshold: number | undefined;
  constructor(
    private readonly health: HealthCheckService,
    private readonly queue: JobQueueHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.queue.isHealthy('jobQueue', { maxOldestReadyAgeMs: HealthController.threshold, timeoutMs: 2_000 })]);
  }
}

@Module({})
class ObservedApp {
  static with(options: JobQueueModuleOptions, registry: Registry): DynamicModule {
    return {
      module: ObservedApp,
      imports: [TerminusModule, JobQueueModule.forRoot(options), JobQueueMetricsModule.forRoot({ registry, path: '/metrics', cacheMs: 5_000 }), JobQueueHealthModule],
      controllers: [HealthController],
      providers: [WorkloadHandlers],
    };
  }
}

async function boot(db: TestDatabase, registry: Registry): Promise<{ app: INestApplication; base: string }> {
  const options = db.options({ pollIntervalMs: 50, heartbeatIntervalMs: 200, retryBackoff: { baseMs: 20, maxMs: 50 }, externalTypes: ['ob-nobody'] });
  const app = await NestFactory.create(ObservedApp.with(options, registry), { logger: ['error'], abortOnError: false });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, base: `http://127.0.0.1:${address.port}` };
}

type Health = { status: string; details: Record<string, Record<string, unknown>> };

/** The value of one sample line of the text format, e.g. `job_queue_jobs_completed_total{type="ob-ok"}`. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  if (!line) throw new Error(`no sample ${series} in:\n${text}`);
  return Number(line.slice(series.length + 1));
}

describeDialects('metrics and health over HTTP', (db) => {
  it('metrics show the workload (N done, M failed, K retries; histogram counts = attempts); ten scrapes cost one stats read; health up/degraded/down', async () => {
    const registry = new Registry();
    const { app, base } = await boot(db, registry);
    try {
      const queue = app.get(JobQueueService);
      const N = 20, FLAKY = 4, M = 3, S = 3;
      const ids = await queue.enqueueGraph([
        ...Array.from({ length: N }, (_, i) => ({ ref: `ok${i}`, type: 'ob-ok' })),
        ...Array.from({ length: FLAKY }, (_, i) => ({ ref: `fl${i}`, type: 'ob-flaky', maxAttempts: 3 })),
        ...Array.from({ length: M }, (_, i) => ({ ref: `bad${i}`, type: 'ob-bad', maxAttempts: 2 })),
        ...Array.from({ length: S }, (_, i) => ({ ref: `sn${i}`, type: 'ob-snoozy' })),
      ]);
      await Promise.all(Object.values(ids).map((id) => queue.waitFor(id, { timeoutMs: 60_000 })));
      await new Promise((r) => setTimeout(r, 200)); // the lifecycle reports are delivered a turn after the commit

      const text = await (await fetch(`${base}/metrics`)).text();
      expect(sample(text, 'job_queue_jobs_enqueued_total{type="ob-ok"}')).toBe(N);
      expect(sample(text, 'job_queue_jobs_enqueued_total{type="ob-bad"}')).toBe(M);
      expect(sample(text, 'job_queue_jobs_completed_total{type="ob-ok"}')).toBe(N);
      expect(sample(text, 'job_queue_jobs_completed_total{type="ob-flaky"}')).toBe(FLAKY);
      expect(sample(text, 'job_queue_jobs_failed_total{type="ob-bad"}')).toBe(M);
      expect(sample(text, 'job_queue_jobs_retried_total{type="ob-flaky"}')).toBe(FLAKY); // K = FLAKY + M
      expect(sample(text, 'job_queue_jobs_retried_total{type="ob-bad"}')).toBe(M);
      // Each snoozing job: 2 snoozes, 1 completion, 3 handler runs (observed as attempts ran).
      expect(sample(text, 'job_queue_jobs_snoozed_total{type="ob-snoozy"}')).toBe(2 * S);
      expect(sample(text, 'job_queue_jobs_completed_total{type="ob-snoozy"}')).toBe(S);
      expect(sample(text, 'job_queue_job_duration_seconds_count{type="ob-snoozy"}')).toBe(3 * S);
      // One duration and one wait observation per attempt: N + 2·FLAKY + 2·M.
      expect(sample(text, 'job_queue_job_duration_seconds_count{type="ob-ok"}')).toBe(N);
      expect(sample(text, 'job_queue_job_duration_seconds_count{type="ob-flaky"}')).toBe(2 * FLAKY);
      expect(sample(text, 'job_queue_job_duration_seconds_count{type="ob-bad"}')).toBe(2 * M);
      // Every claim path returns run_after, the rotation's procedure on MariaDB too (MySQL migration 12).
      expect(sample(text, 'job_queue_job_wait_seconds_count{type="ob-ok"}')).toBe(N);
      expect(sample(text, 'job_queue_job_wait_seconds_count{type="ob-bad"}')).toBe(2 * M);
      // Waits are seconds from run_after to start: non-negative and far below the spec's run time.
      const waitSum = sample(text, 'job_queue_job_wait_seconds_sum{type="ob-ok"}');
      expect(waitSum).toBeGreaterThanOrEqual(0);
      expect(waitSum / N).toBeLessThan(30);
      expect(sample(text, 'job_queue_jobs{state="done"}')).toBe(N + FLAKY + S);
      expect(sample(text, 'job_queue_jobs{state="failed"}')).toBe(M);
      expect(sample(text, 'job_queue_oldest_ready_age_seconds')).toBe(0);

      // Ten concurrent scrapes after the cache expired: one stats read, not ten. Its statements:
      // the open states (SQLite: a slice per state), the oldest ready age (MySQL: one per level),
      // and the finished states when due; ten reads made 20 or more.
      const metrics = app.get(JobQueueMetrics);
      const dbRun = jest.spyOn(app.get(JobQueueDatabase), 'run');
      await new Promise((r) => setTimeout(r, 5_100));
      const before = metrics.statsReads;
      const texts = await Promise.all(Array.from({ length: 10 }, () => fetch(`${base}/metrics`).then((r) => r.text())));
      expect(metrics.statsReads - before).toBe(1);
      const gaugeStatement = /SELECT state, COUNT\(\*\) AS n FROM jobs|INDEXED BY jobs_state_id_idx|\(j\.run_after, j\.updated_at\)|GREATEST\(run_after, updated_at\) AS c|ORDER BY state, type, neg_priority LIMIT 1/;
      const statsStatements = dbRun.mock.calls.filter(([s]) => gaugeStatement.test(JSON.stringify(s)));
      expect(statsStatements.length).toBeGreaterThanOrEqual(2);
      expect(statsStatements.length).toBeLessThanOrEqual(8);
      for (const t of texts) expect(sample(t, 'job_queue_jobs{state="done"}')).toBe(N + FLAKY + S);
      dbRun.mockRestore();

      // Health: up, with the details.
      const up = (await (await fetch(`${base}/health`)).json()) as Health;
      expect(up.status).toBe('ok');
      expect(up.details.jobQueue).toMatchObject({ status: 'up', worker: true, inFlight: 0, lastClaimAt: expect.any(String), lastHeartbeatAt: expect.anything() });

      // Degraded: a ready job nobody here handles, older than the threshold. The age the check
      // above read (a fast read) is kept HEALTH_AGE_MIN_MS: the next check past it reads again.
      await queue.enqueue({ type: 'ob-nobody' });
      await new Promise((r) => setTimeout(r, HEALTH_AGE_MIN_MS + 400));
      HealthController.threshold = 100;
      const degradedRes = await fetch(`${base}/health`);
      const degraded = (await degradedRes.json()) as Health;
      expect(degradedRes.status).toBe(200);
      expect(degraded.details.jobQueue).toMatchObject({ status: 'degraded', message: expect.stringMatching(/oldest ready job has waited \d+ ms/) });
      HealthController.threshold = undefined;

      // Down: the database does not answer. Here its driver refuses every statement (the real
      // server-stop case is test/restart/observability-restart.spec.ts, run by the lead).
      const refuse = jest.spyOn(app.get(JobQueueDatabase), 'run').mockRejectedValue(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
      const downRes = await fetch(`${base}/health`);
      const down = (await downRes.json()) as Health;
      expect(downRes.status).toBe(503);
      expect(down.details.jobQueue).toMatchObject({ status: 'down', message: expect.stringMatching(/database unreachable: connect ECONNREFUSED/) });
      // Metrics still answer meanwhile (the gauges keep their last values).
      expect((await fetch(`${base}/metrics`)).status).toBe(200);
      refuse.mockRestore();
      const again = (await (await fetch(`${base}/health`)).json()) as Health;
      expect(again.details.jobQueue.status).toBe('up');

      // A timeout a timer cannot wait (NaN, 0, past 2^31 - 1 ms: it fired after 1 ms) is refused, not reported as down.
      const indicator = app.get(JobQueueHealthIndicator);
      for (const timeoutMs of [2 ** 31, 30 * 24 * 3_600_000, NaN, 0]) {
        await expect(indicator.isHealthy('jobQueue', { timeoutMs })).rejects.toBeInstanceOf(InvalidOptionError);
      }
      expect(await indicator.isHealthy('jobQueue', { timeoutMs: 2 ** 31 - 1 })).toMatchObject({ jobQueue: { status: 'up' } });
    } finally {
      await app.close();
    }
  }, 120_000);

  it("job_queue_schedules_failing counts the schedules whose last slot's job failed, as findSchedules({ lastRunState: 'failed' })", async () => {
    const registry = new Registry();
    const { app, base } = await boot(db, registry);
    const queue = app.get(JobQueueService);
    const lastState = async (name: string) => {
      const [s] = (await queue.findSchedules({ name })).schedules;
      return s?.lastRunAt ? (await queue.find({ key: `recurring:${name}:${s.lastRunAt.toISOString()}` })).jobs[0]?.state : undefined;
    };
    try {
      await queue.schedule({ name: 'ob-nightly', cron: '* * * * * *', type: 'ob-bad', maxAttempts: 1 });
      await queue.schedule({ name: 'ob-hourly', cron: '* * * * * *', type: 'ob-ok' });
      await eventually('a slot of each', async () => (await lastState('ob-nightly')) !== undefined && (await lastState('ob-hourly')) !== undefined, 20_000, 100);
      // No more slots: the last ones stay the last.
      await queue.schedule({ name: 'ob-nightly', cron: '0 0 1 1 *', type: 'ob-bad', maxAttempts: 1 });
      await queue.schedule({ name: 'ob-hourly', cron: '0 0 1 1 *', type: 'ob-ok' });
      await eventually('the last runs finished', async () => (await lastState('ob-nightly')) === 'failed' && (await lastState('ob-hourly')) === 'done', 30_000, 100);
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(sample(text, 'job_queue_schedules_failing')).toBe(1);
      expect(text).toContain('# TYPE job_queue_schedules_failing gauge');
    } finally {
      for (const name of ['ob-nightly', 'ob-hourly']) await queue.unschedule(name);
      await app.close();
    }
  });

  it("closing an app leaves the metrics that a later app in the process registered (they replaced its own)", async () => {
    const registry = new Registry();
    const start = () =>
      Test.createTestingModule({
        imports: [JobQueueModule.forRoot(db.options({ worker: false, externalTypes: ['ob-later'] })), JobQueueMetricsModule.forRoot({ registry })],
      })
        .compile()
        .then(async (m) => (await m.init(), m));
    const first = await start();
    const later = await start();
    try {
      await first.close();
      await later.get(JobQueueService).enqueue({ type: 'ob-later' });
      await new Promise((r) => setTimeout(r, 100)); // delivered a turn after the commit
      // Before: the first app's close removed every job_queue_* metric, the later app's included.
      expect(sample(await registry.metrics(), 'job_queue_jobs_enqueued_total{type="ob-later"}')).toBe(1);
    } finally {
      await first.close();
      await later.close();
    }
    // An app whose metrics are the registered ones still takes them along.
    expect(await registry.getMetricsAsJSON()).toEqual([]);
  }, 60_000);
});

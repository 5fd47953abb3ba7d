import { jest } from '@jest/globals';
import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { JobQueueModule, JobQueueService } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { Sql } from '../../lib/database/sql';
import { HEALTH_AGE_MIN_MS } from '../../lib/health/job-queue.health';
import { JobQueueHealthIndicator, JobQueueHealthModule } from 'nestjs-sql-job-queue/health';
import { describeDialects } from '../support/describe-dialects';

const isAgeRead = (s: Sql) => s.strings.some((t) => t.includes('RECURSIVE lv') || t.includes('FORCE INDEX (jobs_ready_idx)'));
const isPing = (s: Sql) => s.strings.some((t) => t.includes('SELECT 1 AS ok'));

/**
 * The health check's oldest ready age costs a few index probes per (type, priority) of the
 * ready jobs, on MySQL a statement each. With 10,000 of them (100 types x 100 priorities,
 * `.scratch/health-levels.cjs`) it took 3 s on MariaDB (0.14-0.48 s on PostgreSQL and SQLite), so
 * a check with the default 3 s timeout said `down` ("database unreachable") of a database that
 * answered every statement: a readiness probe took every replica out of service at once. Now a
 * read that is slow but a database that answers a ping is `up`, with the last age read.
 */
describeDialects('health check whose oldest-ready read is slow', (db) => {
  let moduleRef: TestingModule;
  let health: JobQueueHealthIndicator;
  let slow: { age: number; ping: number };

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [TerminusModule, JobQueueModule.forRoot(db.options({ worker: false, externalTypes: ['elsewhere'] })), JobQueueHealthModule],
    }).compile();
    await moduleRef.init();
    health = moduleRef.get(JobQueueHealthIndicator);
    await moduleRef.get(JobQueueService).enqueue({ type: 'elsewhere' });
    const database = moduleRef.get(JobQueueDatabase);
    const run = database.run.bind(database);
    jest.spyOn(database, 'run').mockImplementation(async (statement: Sql) => {
      const ms = isAgeRead(statement) ? slow.age : isPing(statement) ? slow.ping : 0;
      if (ms) await new Promise((r) => setTimeout(r, ms));
      return run(statement);
    });
  });
  afterAll(() => moduleRef?.close());

  it('a read slower than timeoutMs of a database that answers: up, with the last age read', async () => {
    slow = { age: 0, ping: 0 };
    const first = (await health.isHealthy('q', { timeoutMs: 600 })).q;
    expect(first).toMatchObject({ status: 'up', oldestReadyAgeMs: expect.any(Number), oldestReadyAgeMeasuredAt: expect.any(String) });

    // Past the first (fast) read's pace, so that this check reads again, slowly.
    await new Promise((r) => setTimeout(r, HEALTH_AGE_MIN_MS + 100));
    slow = { age: 1_500, ping: 0 };
    const started = Date.now();
    const check = (await health.isHealthy('q', { timeoutMs: 600, maxOldestReadyAgeMs: 3_600_000 })).q;
    expect(Date.now() - started).toBeLessThan(1_400);
    // Before: { status: 'down', message: 'database unreachable: no answer within 600 ms' }.
    expect(check).toMatchObject({ status: 'up', oldestReadyAgeMs: first.oldestReadyAgeMs });
    // The last age read, and when: the first check's read, before this check began.
    expect(check.oldestReadyAgeMeasuredAt).toBe(first.oldestReadyAgeMeasuredAt);
    expect(Date.parse(String(check.oldestReadyAgeMeasuredAt))).toBeLessThan(started - HEALTH_AGE_MIN_MS);
    await new Promise((r) => setTimeout(r, 1_500)); // the slow read lands
  }, 30_000);

  it('neither the read nor a ping answers in time: down, as before', async () => {
    // The slow read that landed is kept 20 times as long as it took: only the ping is asked (the
    // read and the ping both silent: health-pace.spec.ts, frozen-database.spec.ts).
    slow = { age: 1_500, ping: 1_500 };
    const check = (await health.isHealthy('q', { timeoutMs: 600 })).q;
    expect(check).toMatchObject({ status: 'down', message: 'database unreachable: no answer within 600 ms' });
    await new Promise((r) => setTimeout(r, 1_600));
    slow = { age: 0, ping: 0 };
    expect((await health.isHealthy('q', { timeoutMs: 600 })).q.status).toBe('up');
  }, 30_000);
});

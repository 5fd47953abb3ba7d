import { jest } from '@jest/globals';
import { Test, type TestingModule } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { JobQueueModule, JobQueueService } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { Sql } from '../../lib/database/sql';
import { JobQueueMetrics, JobQueueMetricsModule } from 'nestjs-sql-job-queue/metrics';
import { describeDialects } from '../support/describe-dialects';

const isAgeRead = (s: Sql) => s.strings.some((t) => t.includes('RECURSIVE lv') || t.includes('FORCE INDEX (jobs_ready_idx)'));

/**
 * The oldest ready age costs a few probes per (type, priority) of the ready jobs, on MySQL a
 * statement each: 2.5-3.5 s per read with 5,000 types on MariaDB (`.scratch/levels.cjs mysql 5000 1`).
 * Unlike the counts it was not paced: a scraper asking every few seconds had it read again every
 * `cacheMs`, the database busy with it most of the time, from every pod (the gauge is
 * cluster-wide). Now a slow read is kept 20 times as long as it took (at most 15 s), like the
 * open states' counts.
 */
describeDialects('the oldest ready age gauge when its read is slow', (db) => {
  const READ_MS = 300;
  let moduleRef: TestingModule;
  const registry = new Registry();

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [JobQueueModule.forRoot(db.options({ worker: false, externalTypes: ['elsewhere'] })), JobQueueMetricsModule.forRoot({ registry, cacheMs: 100 })],
    }).compile();
    await moduleRef.init();
    await moduleRef.get(JobQueueService).enqueue({ type: 'elsewhere' });
    const database = moduleRef.get(JobQueueDatabase);
    const run = database.run.bind(database);
    jest.spyOn(database, 'run').mockImplementation(async (statement: Sql) => {
      if (isAgeRead(statement)) await new Promise((r) => setTimeout(r, READ_MS));
      return run(statement);
    });
  });
  afterAll(() => moduleRef?.close());

  it('a scraper asking every 50 ms for 3 s gets one read, not one per cacheMs', async () => {
    const metrics = moduleRef.get(JobQueueMetrics);
    const before = metrics.statsReads;
    for (const end = Date.now() + 3_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) await registry.metrics();
    // Before: 7-8 reads, back to back (the database busy with them nearly all the time).
    expect(metrics.statsReads - before).toBe(1);
  }, 30_000);
});

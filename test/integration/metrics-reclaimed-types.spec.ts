import { jest } from '@jest/globals';
import { Test, type TestingModule } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { JobLifecycle, JobQueueModule, JobQueueService } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { Sql } from '../../lib/database/sql';
import { JobQueueMetricsModule } from 'nestjs-sql-job-queue/metrics';
import { describeDialects } from '../support/describe-dialects';
import { eventually } from '../support/wait';

const JOBS = 200;
const ARGS_CHARS = 64 * 1024;

/**
 * A sweep reports the jobs it reclaimed (a crashed worker's) without their type, and the metrics
 * count retries by type: the lifecycle read each job's whole view for it, args and result
 * included. 1,000 reclaimed jobs with 1 MB args took 19 s and 426 MB of heap on PostgreSQL
 * (10.6 s on SQLite) to show up in job_queue_jobs_retried_total (`.scratch/retrymem.cjs`); the
 * type (and, with groupLabel, the group) is all they need.
 */
describeDialects('metrics of jobs reported without their type', (db) => {
  for (const groupLabel of [false, true]) {
    it(`reads their type${groupLabel ? ' and group' : ''}, not their args (groupLabel: ${groupLabel})`, async () => {
      const registry = new Registry();
      const moduleRef: TestingModule = await Test.createTestingModule({
        imports: [
          JobQueueModule.forRoot(db.options({ worker: false, externalTypes: ['reclaimed'], maxArgsBytes: 2 * ARGS_CHARS })),
          JobQueueMetricsModule.forRoot({ registry, groupLabel }),
        ],
      }).compile();
      await moduleRef.init();
      try {
        const queue = moduleRef.get(JobQueueService);
        const pad = 'x'.repeat(ARGS_CHARS);
        const ids = Object.values(await queue.enqueueGraph(Array.from({ length: JOBS }, (_, i) => ({ ref: `r${i}`, type: 'reclaimed', group: 'tenant-a', args: { pad } }))));
        const database = moduleRef.get(JobQueueDatabase);
        const run = jest.spyOn(database, 'run');
        moduleRef.get(JobLifecycle).retrying(ids);
        const series = groupLabel ? 'job_queue_jobs_retried_total{type="reclaimed",group="tenant-a"}' : 'job_queue_jobs_retried_total{type="reclaimed"}';
        await eventually('the retries counted', async () => (await registry.metrics()).includes(`${series} ${JOBS}\n`), 20_000, 20);
        const texts = run.mock.calls.map(([statement]) => (statement as Sql).render(db.dialect).text);
        run.mockRestore();
        expect(texts.length).toBeGreaterThan(0);
        // Before: every job's view (SELECT id, type, ref, args, result, …), 8 MB of args per read.
        expect(texts.filter((t) => /\bargs\b/.test(t))).toEqual([]);
      } finally {
        await moduleRef.close();
      }
    }, 60_000);
  }
});

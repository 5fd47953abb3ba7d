import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { JobHandler, JobQueueModule, JobQueueService } from '../../lib';
import { JobQueueMetricsModule } from 'nestjs-sql-job-queue/metrics';
import { describeDialects } from '../support/describe-dialects';
import { eventually } from '../support/wait';

@Injectable()
class Drained {
  static started = 0;
  @JobHandler('drain-short')
  async short(): Promise<void> {
    Drained.started++;
    await new Promise((r) => setTimeout(r, 300));
  }
  /** Holds the shutdown's drain open for its grace period. */
  @JobHandler('drain-long')
  async long(): Promise<void> {
    Drained.started++;
    await new Promise((r) => setTimeout(r, 3_000));
  }
}

function completed(text: string, type: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`job_queue_jobs_completed_total{type="${type}"} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/**
 * app.close() lets running jobs finish within shutdownGraceMs, and an HTTP app keeps serving
 * /metrics meanwhile (Nest closes the server after beforeApplicationShutdown). The metrics were
 * taken out of the registry in onModuleDestroy, before that drain: every scrape of it showed no
 * job_queue_* series at all, and the jobs finished in it were never exported.
 */
describeDialects('the metrics while app.close() drains running jobs', (db) => {
  it('a scrape during the drain has the jobs that finished in it; after the close, none of ours', async () => {
    Drained.started = 0;
    const registry = new Registry();
    const app = await Test.createTestingModule({
      imports: [JobQueueModule.forRoot(db.options({ concurrency: 20, pollIntervalMs: 20, shutdownGraceMs: 5_000 })), JobQueueMetricsModule.forRoot({ registry })],
      providers: [Drained],
    }).compile();
    await app.init();
    const queue = app.get(JobQueueService);
    await queue.enqueueGraph([{ ref: 'long', type: 'drain-long' }, ...Array.from({ length: 10 }, (_, i) => ({ ref: `s${i}`, type: 'drain-short' }))]);
    await eventually('all started', async () => Drained.started === 11, 10_000, 10);
    const closing = app.close();
    try {
      await new Promise((r) => setTimeout(r, 1_200)); // the short ones finished 0.3 s in; the long one holds the drain
      // Before: undefined (no job_queue_* series in the registry from the start of the close).
      expect(completed(await registry.metrics(), 'drain-short')).toBe(10);
    } finally {
      await closing;
    }
    expect((await registry.getMetricsAsJSON()).filter((m) => m.name.startsWith('job_queue'))).toEqual([]);
  }, 60_000);
});

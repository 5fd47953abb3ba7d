import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { JobLifecycle, OnJobEvent, type JobView } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

const JOBS = 1_000;
const ARGS_CHARS = 64 * 1024;

@Injectable()
class CancelLog {
  static heard = 0;
  @OnJobEvent('cancelled') cancelled(job: JobView) {
    if (job.args && (job.args as { pad: string }).pad.length === ARGS_CHARS) CancelLog.heard++;
  }
}

/**
 * A listener's views are read after the commit, one read per flush. A flush read every view of
 * its batch before delivering any: a cancelMany of 20,000 jobs with 10 KB args held 20,000 views
 * (500 MB of heap, from 24 MB) and called the first listener 12 s after the cancel returned; with
 * 1 MB args a few thousand jobs were past the heap limit. Now a flush reads and delivers slices of
 * about 8 MB of args and results each (`.scratch/events-mem.cjs`: 61 MB at most, the first call
 * 44 ms after the cancel).
 */
describeDialects('event views of a large batch', (db) => {
  it(`a cancelMany of ${JOBS} jobs with 64 KB args: views are read a few MB at a time, every event delivered`, async () => {
    CancelLog.heard = 0;
    const app = await startQueueApp(db, { worker: false, externalTypes: ['ev-big'], maxArgsBytes: 2 * ARGS_CHARS }, [CancelLog]);
    try {
      const lifecycle = app.module.get(JobLifecycle) as unknown as { attachViews(batch: Array<{ id: number; event: string }>, ids: Set<number>): Promise<void> };
      const attach = lifecycle.attachViews.bind(lifecycle);
      const perRead: number[] = [];
      jest.spyOn(lifecycle, 'attachViews').mockImplementation((batch, ids) => {
        const cancelled = new Set(batch.filter((s) => s.event === 'cancelled').map((s) => s.id));
        if (cancelled.size) perRead.push(cancelled.size);
        return attach(batch, ids);
      });
      const pad = 'x'.repeat(ARGS_CHARS);
      for (let i = 0; i < JOBS; i += 50) await app.queue.enqueueGraph(Array.from({ length: 50 }, (_, k) => ({ ref: `j${k}`, type: 'ev-big', args: { pad, n: i + k } })));
      expect(await app.queue.cancelMany({ type: 'ev-big' })).toEqual({ count: JOBS });
      await eventually(`${JOBS} cancelled events`, async () => CancelLog.heard === JOBS, 60_000);
      // 8 MB of 64 KB views is 128 of them; before, one read took all 1,000 (64 MB).
      expect(Math.max(...perRead)).toBeLessThanOrEqual(128);
      expect(perRead.reduce((a, b) => a + b, 0)).toBe(JOBS);
    } finally {
      await app.close();
    }
  }, 120_000);
});

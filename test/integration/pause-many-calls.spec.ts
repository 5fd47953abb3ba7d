import { jest } from '@jest/globals';
import type { SqlResult } from '../../lib/database/sql-executor';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { PausedWork } from '../../lib/pause/paused-work';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';

const GROUPS = 2_000;

/**
 * pause() and resume() refresh this process's paused sets before they return, and a refresh read
 * every entry because the version had moved, by the call's own change: pausing 2,000 tenants one
 * call at a time read 2 million rows (n²/2), resuming them as many again. A call whose change is
 * the only one since the entries this process holds now applies it to them without a read.
 */
describeDialects(`${GROUPS} groups paused, then resumed, one call each`, (db) => {
  it('rows read grow with the calls, not with their square; the sets follow every call', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
    try {
      const paused = app.module.get(PausedWork);
      const run = jest.spyOn(app.module.get(JobQueueDatabase), 'run');
      let rows = 0;
      const settle = async () => {
        for (const r of run.mock.results) rows += (await (r.value as Promise<SqlResult>)).rows.length;
        run.mockClear();
      };
      for (let i = 0; i < GROUPS; i++) {
        await app.queue.pause({ group: `tenant-${i}` });
        expect(paused.groups.has(`tenant-${i}`)).toBe(true);
        if (i % 100 === 0) await settle();
      }
      await settle();
      const pauseRows = rows;
      expect(paused.groupList).toHaveLength(GROUPS);
      rows = 0;
      for (let i = 0; i < GROUPS; i++) {
        await app.queue.resume({ group: `tenant-${i}` });
        expect(paused.groups.has(`tenant-${i}`)).toBe(false);
        if (i % 100 === 0) await settle();
      }
      await settle();
      const resumeRows = rows;
      run.mockRestore();
      expect([paused.groups.size, paused.groupList.length]).toEqual([0, 0]);
      process.stdout.write(`[${db.dialect}] ${GROUPS} pauses read ${pauseRows} rows, ${GROUPS} resumes ${resumeRows}\n`);
      // Rows the refreshes read (the calls read one row each, in their transaction); before: ~2,000,000 each way.
      expect(pauseRows).toBeLessThan(20 * GROUPS);
      expect(resumeRows).toBeLessThan(20 * GROUPS);
    } finally {
      await app.close();
    }
  }, 120_000);
});

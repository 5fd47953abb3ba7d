import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { JobHandler } from '../../lib';
import { WorkerVitals } from '../../lib/scheduler/worker-vitals';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

const PAUSED = Number(process.env.PAUSED_GROUPS ?? 40_000);
const TYPES = ['mail', 'sms', 'push'];

@Injectable()
class Handlers {
  @JobHandler('mail')
  async mail(): Promise<null> {
    return null;
  }

  @JobHandler('sms')
  async sms(): Promise<null> {
    return null;
  }

  @JobHandler('push')
  async push(): Promise<null> {
    return null;
  }
}

const BACKLOG_GROUPS = Number(process.env.PAUSED_BACKLOG_GROUPS ?? 2_000);
const PER_GROUP = 10;
// A look at the groups steps over every paused group holding jobs, one probe each (on MariaDB one
// round trip each): the waits scale with them. MariaDB's resumed group took up to 19 s under load.
const WAIT_MS = Math.max(60_000, BACKLOG_GROUPS * 50);

describeDialects(`${PAUSED} paused groups`, (db) => {
  it('pause() returns, jobs of other groups still run past the paused backlog, resume runs a group', async () => {
    const app = await startQueueApp(db, { pollIntervalMs: 200 }, [Handlers]);
    // Every claim must succeed: MySQL's rotation walk took the paused groups as a 64 KB TEXT
    // argument, and failed every time past about 5,000 of them.
    const claimFailed = jest.spyOn(app.module.get(WorkerVitals), 'claimFailed');
    try {
      const now = db.dialect === 'postgres' ? 'now()' : db.dialect === 'mysql' ? 'UTC_TIMESTAMP(3)' : `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
      for (let i = 0; i < PAUSED; i += 5_000) {
        const rows = Array.from({ length: Math.min(5_000, PAUSED - i) }, (_, k) => `('group', 'tenant-${i + k}', ${now})`);
        await app.rows(`INSERT INTO job_queue_paused (kind, name, paused_at) VALUES ${rows.join(', ')}`);
      }
      let t = Date.now();
      await app.queue.pause({ group: 'tenant-0' }); // and this process reads all of them
      const pauseMs = Date.now() - t;
      expect((await app.queue.listPaused()).length).toBe(PAUSED);
      // findPaused pages them by the primary key: every page a range read, the last as the first.
      t = Date.now();
      let cursor: string | null = null;
      let paged = 0;
      let pages = 0;
      let slowestPageMs = 0;
      do {
        const started = Date.now();
        const page = await app.queue.findPaused({ kind: 'group' }, { limit: 500, cursor });
        slowestPageMs = Math.max(slowestPageMs, Date.now() - started);
        paged += page.paused.length;
        cursor = page.nextCursor;
      } while (cursor && ++pages <= PAUSED / 500 + 1);
      expect([paged, cursor]).toEqual([PAUSED, null]);
      const pagingMs = Date.now() - t;

      // A backlog in the paused groups, ahead of the live jobs in claim order and in group order
      // (the planner's look at the first groups used to see only paused ones, and claim nothing).
      const backlog = Array.from({ length: BACKLOG_GROUPS * PER_GROUP }, (_, i) => ({
        ref: `b${i}`,
        type: TYPES[i % TYPES.length],
        group: `tenant-${i % BACKLOG_GROUPS}`,
      }));
      await app.queue.enqueueGraph(backlog);
      t = Date.now();
      await app.queue.enqueueGraph(TYPES.map((type, i) => ({ ref: `l${i}`, type, group: `zz-live-${i}` })));
      await eventually('the live jobs ran', async () => (await app.count(`state = 'done'`)) === TYPES.length, WAIT_MS);
      const liveMs = Date.now() - t;
      expect(await app.count(`state = 'ready'`)).toBe(backlog.length);

      t = Date.now();
      await app.queue.resume({ group: 'tenant-7' });
      await eventually('the resumed group ran', async () => (await app.count(`state = 'done'`)) === TYPES.length + PER_GROUP, WAIT_MS);
      const resumeMs = Date.now() - t;
      expect(await app.count(`state = 'ready'`)).toBe(backlog.length - PER_GROUP);
      expect(claimFailed).not.toHaveBeenCalled();
      process.stdout.write(`[${db.dialect}] ${PAUSED} paused groups, ${backlog.length} paused jobs: pause() ${pauseMs} ms, findPaused pages of 500 in ${pagingMs} ms (slowest ${slowestPageMs} ms), live jobs done in ${liveMs} ms, a resumed group's in ${resumeMs} ms\n`);
    } finally {
      await app.close();
    }
  }, 120_000 + 2 * WAIT_MS);
});

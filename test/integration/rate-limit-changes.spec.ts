import { Injectable } from '@nestjs/common';
import { JobHandler } from '../../lib';
import { sql } from '../../lib/database/sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

@Injectable()
class Mailer {
  @JobHandler('rl-mail')
  async send(): Promise<number> {
    return 1;
  }
}

const limits = (limit: number, intervalMs: number) => ({ rateLimits: { types: { 'rl-mail': { limit, intervalMs } } }, pollIntervalMs: 100 });

/**
 * A rate window is stored as claim counts per bucket, and a bucket's width follows the limit's
 * interval. Restarting with a longer interval read the stored head (a bucket number of the
 * shorter width) as a time decades ahead: every claim of the type was admitted to start then,
 * its jobs sat `running` in worker slots with a `started_at` in the year 5385, and the worker
 * spun on 1 ms timers (33,870 TimeoutOverflowWarnings in 10 s); the row stayed so for good.
 */
describeDialects('rate limits changed between restarts', (db) => {
  let app: QueueApp | undefined;
  afterEach(async () => {
    await app?.db.run(sql`DELETE FROM jobs`);
    await app?.db.run(sql`DELETE FROM job_queue_rate_limits`);
    await app?.close();
    app = undefined;
  });

  const states = async (a: QueueApp) => (await a.rows(`SELECT state FROM jobs WHERE type = 'rl-mail' ORDER BY id`)).map((r) => String(r.state));

  it('a longer interval after a restart: the claims already made still count, the rest run at once', async () => {
    // 5 in 10 s: its 100 ms buckets give a handler 600 ms to start after its claim. With 5/s (60 ms)
    // a process the OS left unscheduled that long under a loaded suite handed a claim back, a
    // claim spent, and the 3 claims were 4 or 5.
    app = await startQueueApp(db, limits(5, 10_000), [Mailer]);
    for (let i = 0; i < 3; i++) await app.queue.enqueue({ type: 'rl-mail' });
    await eventually('3 jobs done under 5 in 10 s', async () => (await app!.count(`type = 'rl-mail' AND state = 'done'`)) === 3, 20_000);
    await app.close();

    // Now 5 a minute: the 3 claims of a moment ago leave room for 2, and those 2 start now.
    app = await startQueueApp(db, limits(5, 60_000), [Mailer]);
    const before = Date.now();
    for (let i = 0; i < 4; i++) await app.queue.enqueue({ type: 'rl-mail' });
    await eventually('2 more jobs done under 5/min', async () => (await app!.count(`type = 'rl-mail' AND state = 'done'`)) === 5, 20_000);
    await new Promise((r) => setTimeout(r, 500)); // a worker that would take more has had the time to
    expect(await states(app)).toEqual(['done', 'done', 'done', 'done', 'done', 'ready', 'ready']);
    const starts = await app.rows(`SELECT started_at FROM jobs WHERE state = 'done'`);
    for (const r of starts) expect(new Date(r.started_at as string).getTime()).toBeLessThan(before + 60_000);
  }, 60_000);

  it('a window row left far ahead (an older release after an interval change, a clock stepped back) heals', async () => {
    app = await startQueueApp(db, limits(5, 1_000), [Mailer]);
    // As the release before this fix left it: 1 ms buckets (a 100 ms interval) read as 10 ms ones.
    await app.db.run(sql`UPDATE job_queue_rate_limits SET head = ${Date.now()}, counts = ${'1,1,1'} WHERE name = ${'type:rl-mail'}`);
    for (let i = 0; i < 4; i++) await app.queue.enqueue({ type: 'rl-mail' });
    // The 3 claims it holds still count (5/s leaves room for 2 now), the others follow within a second or so.
    await eventually('4 jobs done', async () => (await app!.count(`type = 'rl-mail' AND state = 'done'`)) === 4, 20_000);
  }, 60_000);
});

import { Injectable } from '@nestjs/common';
import { InvalidScheduleError, JobHandler, OnJobEvent, Recurring, ScheduleNotFoundError, type JobView, type RecurringArgs } from '../../lib';
import { databaseNow } from '../../lib/database/database-now.sql';
import { sql } from '../../lib/database/sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

/** Once a year: no slot of its own falls due while the spec runs, so every job here is a trigger's. */
const YEARLY = '0 3 1 1 *';

@Injectable()
class Annual {
  readonly seen: RecurringArgs[] = [];

  @Recurring(YEARLY, { name: 'trigger-annual', args: { report: 'annual' }, group: 'trigger-g', priority: 3, maxAttempts: 2 })
  async annual(args: RecurringArgs & { report: string }): Promise<void> {
    this.seen.push(args);
  }

  @JobHandler('trigger-tenant')
  async tenant(args: RecurringArgs & { tenant: number }): Promise<{ tenant: number }> {
    return { tenant: args.tenant };
  }

  readonly enqueued: number[] = [];

  @OnJobEvent('enqueued')
  onEnqueued(job: JobView): void {
    if (job.type.startsWith('trigger-')) this.enqueued.push(job.id);
  }
}

describeDialects('triggerSchedule', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { pollIntervalMs: 100 }, [Annual]);
  });
  afterAll(async () => {
    await app.queue.unschedule('trigger-annual');
    await app.queue.unschedule('trigger-tenant-9');
    await app.rows(`DELETE FROM jobs WHERE type IN ('trigger-annual', 'trigger-tenant')`);
    await app.close();
  });

  it('runs an @Recurring once now, as its slot would (args.manual), and leaves its next slot where it was', async () => {
    const annual = app.module.get(Annual);
    const before = (await app.queue.listSchedules()).find((s) => s.name === 'trigger-annual')!;
    const asked = await databaseNow(app.db);
    const job = await app.queue.triggerSchedule('trigger-annual');
    expect(job).toMatchObject({ type: 'trigger-annual', group: 'trigger-g', priority: 3, maxAttempts: 2, key: null });
    const args = job.args as RecurringArgs & { report: string };
    expect(args).toEqual({ report: 'annual', slot: expect.any(String), manual: true });
    // The slot is the database's now when it was asked for (its clock, like the ticks').
    expect(Math.abs(Date.parse(args.slot) - asked.getTime())).toBeLessThan(5_000);
    expect((await app.queue.waitFor(job.id, { timeoutMs: 30_000 })).state).toBe('done');
    expect(annual.seen.filter((a) => a.slot === args.slot)).toEqual([args]);
    // Listeners run after the commit, off the enqueue's path: the event comes, not necessarily first.
    await eventually('the enqueued event', async () => annual.enqueued.includes(job.id), 10_000, 20);
    const after = (await app.queue.listSchedules()).find((s) => s.name === 'trigger-annual')!;
    expect([after.nextRunAt, after.lastRunAt]).toEqual([before.nextRunAt, before.lastRunAt]);
  });

  it('a schedule() one, twice in a row: two runs, each with the schedule\'s args; a dormant one still runs', async () => {
    await app.queue.schedule({ name: 'trigger-tenant-9', cron: YEARLY, type: 'trigger-tenant', args: { tenant: 9 }, group: 'tenant-9' });
    const [a, b] = [await app.queue.triggerSchedule('trigger-tenant-9'), await app.queue.triggerSchedule('trigger-tenant-9')];
    expect(a.id).not.toBe(b.id);
    for (const j of [a, b]) {
      expect(j).toMatchObject({ type: 'trigger-tenant', group: 'tenant-9', args: { tenant: 9, manual: true } });
      expect((await app.queue.waitFor(j.id, { timeoutMs: 30_000 })).result).toEqual({ tenant: 9 });
    }
    // No process declares it any more: it fires no slot, but an operator can still run it.
    const past = app.db.dialect.timeParam(new Date(Date.now() - 60_000));
    await app.db.run(sql`UPDATE job_queue_schedules SET declared_until = ${past} WHERE name = 'trigger-tenant-9'`);
    const c = await app.queue.triggerSchedule('trigger-tenant-9');
    expect((await app.queue.waitFor(c.id, { timeoutMs: 30_000 })).state).toBe('done');
    expect((await app.queue.listSchedules()).find((s) => s.name === 'trigger-tenant-9')!.lastRunAt).toBeNull();
  });

  it('a process without the handler (a web process serving the dashboard, strictTypes on) runs a schedule of the workers\' type', async () => {
    const web = await startQueueApp(db, { worker: false });
    try {
      // Its own enqueue of the type is refused: strictTypes guards what code names, not what a schedule stored.
      await expect(web.queue.enqueue({ type: 'trigger-annual' })).rejects.toThrow(/trigger-annual/);
      const job = await web.queue.triggerSchedule('trigger-annual');
      expect(job).toMatchObject({ type: 'trigger-annual', args: { report: 'annual', manual: true } });
      expect((await app.queue.waitFor(job.id, { timeoutMs: 30_000 })).state).toBe('done');
    } finally {
      await web.close();
    }
  });

  it('an unknown or removed name, or no string: a typed error, nothing enqueued', async () => {
    await app.queue.schedule({ name: 'trigger-gone', cron: YEARLY, type: 'trigger-tenant', args: { tenant: 1 } });
    await app.queue.unschedule('trigger-gone');
    const jobs = await app.count();
    for (const name of ['trigger-gone', 'no-such-schedule', '']) {
      const err = await app.queue.triggerSchedule(name).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ScheduleNotFoundError);
      expect(err).toMatchObject({ code: 'SCHEDULE_NOT_FOUND', schedule: name });
    }
    for (const name of [42, null, { name: 'trigger-annual' }]) {
      await expect(app.queue.triggerSchedule(name as never)).rejects.toBeInstanceOf(InvalidScheduleError);
    }
    expect(await app.count()).toBe(jobs);
  });
});

import { Injectable } from '@nestjs/common';
import { ArgsNotSerializableError, ArgsTooLargeError, InvalidScheduleError, JobHandler, Recurring, type RecurringArgs } from '../../lib';
import { sql } from '../../lib/database/sql';
import { databaseNow } from '../../lib/database/database-now.sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const EVERY_SECOND = '* * * * * *';

/** The handler of the programmatic schedules' job type. */
@Injectable()
class Ticks {
  @JobHandler('tick')
  async tick(_args: RecurringArgs): Promise<void> {}
}

/** The handler of the take-over spec's schedule: a type of its own, so the specs after it count theirs alone. */
@Injectable()
class Handover {
  @JobHandler('handover')
  async handover(_args: RecurringArgs): Promise<void> {}
}

interface SlotJob {
  slot: number;
  backfill: boolean;
  key: string;
}

async function slotJobs(app: QueueApp, type: string): Promise<SlotJob[]> {
  const rows = await app.rows(`SELECT args, job_key FROM jobs WHERE type = '${type}'`);
  return rows
    .map((r) => {
      const args = (typeof r.args === 'string' ? JSON.parse(r.args) : r.args) as RecurringArgs;
      return { slot: Date.parse(args.slot), backfill: args.backfill === true, key: String(r.job_key) };
    })
    .sort((a, b) => a.slot - b.slot);
}

/** Consecutive slots one second apart: nothing missing, nothing doubled. */
function expectContiguous(jobs: SlotJob[]): void {
  for (let i = 1; i < jobs.length; i++) expect([i, jobs[i].slot - jobs[i - 1].slot]).toEqual([i, 1_000]);
}

async function stop(workers: WorkerProcess[]): Promise<void> {
  for (const w of workers) if (!w.dead) w.send('stop');
  await Promise.all(workers.map((w) => w.exited));
}

describeDialects('recurring jobs', (db) => {
  const worker = (schedules: unknown[], options: Record<string, unknown> = {}) =>
    new WorkerProcess('recurring.worker', { ...db.options(), pollIntervalMs: 200, ...options, schedules });

  it('3 processes, a schedule every second: exactly one job per slot, none missing, a SIGKILL changes nothing', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['every-second'] });
    const schedule = { name: 'every-second', cron: EVERY_SECOND };
    const workers = [worker([schedule]), worker([schedule]), worker([schedule])];
    try {
      await Promise.all(workers.map((w) => w.waitFor('ready', 120_000)));
      await sleep(7_000);
      workers[0].kill('SIGKILL');
      await sleep(8_000);
      await stop(workers);

      const jobs = await slotJobs(app, 'every-second');
      expect(jobs.length).toBeGreaterThanOrEqual(10);
      expect(new Set(jobs.map((j) => j.slot)).size).toBe(jobs.length);
      expect(jobs.map((j) => j.key)).toEqual(jobs.map((j) => `recurring:every-second:${new Date(j.slot).toISOString()}`));
      expect(jobs.filter((j) => j.backfill)).toEqual([]);
      expectContiguous(jobs);
      const [view] = await app.queue.listSchedules();
      expect(view.lastRunAt?.getTime()).toBe(jobs[jobs.length - 1].slot);
      process.stdout.write(`[${db.dialect}] recurring: ${jobs.length} slots from 3 processes (1 SIGKILLed), none missing or doubled\n`);
    } finally {
      workers.forEach((w) => w.dead || w.kill());
      await app.close();
    }
  });

  it("after all processes were down for 5 s, backfill 'none' / 'last' / 3 enqueue 0 / 1 / 3 missed slots", async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['bf-none', 'bf-last', 'bf-3'] });
    const schedules = [
      { name: 'bf-none', cron: EVERY_SECOND, backfill: 'none', misfireGraceMs: 1_500 },
      { name: 'bf-last', cron: EVERY_SECOND, backfill: 'last', misfireGraceMs: 1_500 },
      { name: 'bf-3', cron: EVERY_SECOND, backfill: 3, misfireGraceMs: 1_500 },
    ];
    let workers = [worker(schedules), worker(schedules)];
    try {
      await Promise.all(workers.map((w) => w.waitFor('ready', 120_000)));
      await eventually('3 slots of each schedule', async () => (await app.count(`type = 'bf-3'`)) >= 3 && (await app.count(`type = 'bf-none'`)) >= 3, 60_000, 100);
      await stop(workers);
      const before = new Map<string, number>();
      for (const s of schedules) before.set(s.name, (await slotJobs(app, s.name)).length);
      await sleep(5_000);
      workers = [worker(schedules), worker(schedules)];
      await Promise.all(workers.map((w) => w.waitFor('ready', 120_000)));
      await eventually('3 on-time slots after the restart', async () => (await app.count(`type = 'bf-none'`)) >= before.get('bf-none')! + 3, 60_000, 100);
      await stop(workers);

      const missed = new Map<string, number>();
      for (const [name, expected] of [['bf-none', 0], ['bf-last', 1], ['bf-3', 3]] as const) {
        const jobs = await slotJobs(app, name);
        const old = jobs.slice(0, before.get(name));
        const fresh = jobs.slice(before.get(name));
        expectContiguous(old);
        const caughtUp = fresh.filter((j) => j.backfill);
        expect([name, caughtUp.length]).toEqual([name, expected]);
        // The caught-up slots are the latest missed ones, right before the first on-time slot.
        expect(fresh.slice(0, expected)).toEqual(caughtUp);
        expectContiguous(fresh);
        const skipped = (fresh[0].slot - old[old.length - 1].slot) / 1_000 - 1;
        missed.set(name, skipped + caughtUp.length);
        process.stdout.write(`[${db.dialect}] backfill ${name}: ${skipped + caughtUp.length} slot(s) missed while down, ${caughtUp.length} caught up\n`);
      }
      // The three were down together, so they missed the same slots: at least 5 s less the grace.
      expect(missed.get('bf-none')).toBeGreaterThanOrEqual(3);
      expect(missed.get('bf-last')).toBe(missed.get('bf-none'));
      expect(missed.get('bf-3')).toBe(missed.get('bf-none'));
    } finally {
      workers.forEach((w) => w.dead || w.kill());
      await app.close();
    }
  });

  it('a process that joins a running cluster judges late slots by when the cluster began ticking, not by its own start', async () => {
    // A rolling deploy: A has ticked for a while; B starts, A stops, and B takes over a slot that
    // is older than the grace measured from B's start, but was due while A was ticking.
    const a = await startQueueApp(db, { pollIntervalMs: 100 }, [Handover]);
    let aOpen = true;
    let b: QueueApp | undefined;
    try {
      const started = (await databaseNow(a.db)).getTime();
      // The slot below is at most 5 s before B's start, so after A's first tick: on time for the cluster.
      await eventually('A ticking for 5 s', async () => (await databaseNow(a.db)).getTime() >= started + 5_000, 30_000, 200);
      b = await startQueueApp(db, { pollIntervalMs: 100 }, [Handover]);
      const joined = (await databaseNow(b.db)).getTime();
      aOpen = false;
      await a.close();
      await b.queue.schedule({ name: 'taken-over', cron: EVERY_SECOND, type: 'handover', misfireGraceMs: 1_500 });
      // Its first slot 4 s before B started: missed by B's own clock (grace 1.5 s), on time for the cluster.
      const first = Math.floor(joined / 1_000) * 1_000 - 4_000;
      await b.db.run(sql`UPDATE job_queue_schedules SET next_run_at = ${b.db.dialect.timeParam(new Date(first))} WHERE name = 'taken-over'`);
      await eventually('the slots from the first on', async () => (await slotJobs(b!, 'handover')).some((j) => j.slot >= first + 6_000), 30_000, 100);
      const jobs = (await slotJobs(b, 'handover')).filter((j) => j.slot >= first);
      expect(jobs[0]).toEqual({ slot: first, backfill: false, key: `recurring:taken-over:${new Date(first).toISOString()}` });
      expectContiguous(jobs);
    } finally {
      if (b) {
        await b.queue.unschedule('taken-over');
        await b.close();
      }
      if (aOpen) await a.close();
    }
  });

  it('programmatic schedule / listSchedules / stats / unschedule, on a running worker', async () => {
    const app = await startQueueApp(db, { pollIntervalMs: 100 }, [Ticks]);
    try {
      const view = await app.queue.schedule({ name: 'tenant-7.refresh', cron: EVERY_SECOND, type: 'tick', args: { tenant: 7 }, group: 'tenant-7' });
      expect(view).toMatchObject({ name: 'tenant-7.refresh', type: 'tick', timeZone: 'UTC', backfill: 'none', group: 'tenant-7', lastRunAt: null });
      await eventually('2 ticks done', async () => (await app.count(`type = 'tick' AND state = 'done'`)) >= 2, 30_000, 100);
      const [row] = await app.rows(`SELECT args FROM jobs WHERE type = 'tick' LIMIT 1`);
      expect(JSON.parse(String(row.args))).toMatchObject({ tenant: 7, slot: expect.any(String) });
      const stats = await app.queue.stats();
      const mine = stats.schedules.filter((s) => s.name === 'tenant-7.refresh');
      expect(mine).toEqual([{ name: 'tenant-7.refresh', nextRunAt: expect.any(Date), lastRunAt: expect.any(Date) }]);
      expect(mine[0].nextRunAt.getTime()).toBeGreaterThan(mine[0].lastRunAt!.getTime());
      // A row broken by hand (the library never writes one) is skipped, not a stall for the others.
      await app.queue.schedule({ name: 'broken', cron: EVERY_SECOND, type: 'tick', args: { broken: true } });
      await app.rows(`UPDATE job_queue_schedules SET cron = '* * * * * * *' WHERE name = 'broken'`);
      const ticks = await app.count(`type = 'tick'`);
      await eventually('2 more ticks despite the broken row', async () => (await app.count(`type = 'tick'`)) >= ticks + 2, 30_000, 100);
      expect(await app.queue.unschedule('broken')).toBe(true);
      expect(await app.queue.unschedule('tenant-7.refresh')).toBe(true);
      expect(await app.queue.unschedule('tenant-7.refresh')).toBe(false);
      expect((await app.queue.listSchedules()).map((s) => s.name)).not.toContain('tenant-7.refresh');
      const count = await app.count(`type = 'tick'`);
      await sleep(2_000);
      expect(await app.count(`type = 'tick'`)).toBe(count);
    } finally {
      await app.close();
    }
  });

  it('a removed @Recurring stops once no running process declares it; schedule() ones run on; a redeploy revives it', async () => {
    // Another service on the same database, ticking every schedule: it declares none of its own.
    const app = await startQueueApp(db, { pollIntervalMs: 100 }, [Ticks]);
    // leaseTtlMs 1 s: a declaration lasts 5 s and is renewed every second.
    const declaring = () => worker([{ name: 'gone', cron: EVERY_SECOND, misfireGraceMs: 1_000 }], { leaseTtlMs: 1_000 });
    let w = declaring();
    try {
      await app.queue.schedule({ name: 'kept', cron: EVERY_SECOND, type: 'tick' });
      await w.waitFor('ready', 120_000);
      const bootView = (await app.queue.listSchedules()).find((s) => s.name === 'gone')!;
      expect(bootView.declaredUntil).toBeInstanceOf(Date);
      // Longer than a declaration: renewals keep it firing without a gap.
      await sleep(7_000);
      const renewed = (await app.queue.listSchedules()).find((s) => s.name === 'gone')!;
      expect(renewed.declaredUntil!.getTime()).toBeGreaterThan(bootView.declaredUntil!.getTime() + 4_000);
      expectContiguous(await slotJobs(app, 'gone'));
      await stop([w]);

      // Only the other service ticks now: it enqueues 'gone' until the declaration lapses, then never.
      const lapsed = (await app.queue.listSchedules()).find((s) => s.name === 'gone')!.declaredUntil!;
      await eventually('the declaration lapsed', async () => (await databaseNow(app.db)).getTime() > lapsed.getTime() + 1_500, 30_000, 200);
      const frozen = await slotJobs(app, 'gone');
      const kept = await app.count(`type = 'tick'`);
      await sleep(3_000);
      expect(await slotJobs(app, 'gone')).toEqual(frozen);
      expect(frozen.filter((j) => j.slot > lapsed.getTime())).toEqual([]);
      expect(await app.count(`type = 'tick'`)).toBeGreaterThanOrEqual(kept + 2);
      const views = await app.queue.listSchedules();
      expect(views.find((s) => s.name === 'kept')!.declaredUntil).toBeNull();
      expect(views.find((s) => s.name === 'gone')!.declaredUntil!.getTime()).toBe(lapsed.getTime());
      expect((await app.queue.stats()).schedules.map((s) => s.name)).not.toContain('gone');
      process.stdout.write(`[${db.dialect}] removed @Recurring: ${frozen.length} slots, the last ${((frozen[frozen.length - 1].slot - lapsed.getTime()) / 1_000).toFixed(1)} s from the lapse; none after\n`);

      // Deployed again: declared at start-up, it fires again. The slots it slept through were
      // missed, as in downtime (backfill 'none': none caught up), not enqueued as late ones.
      w = declaring();
      await w.waitFor('ready', 120_000);
      await eventually('2 new slots of the revived schedule', async () => (await slotJobs(app, 'gone')).length >= frozen.length + 2, 30_000, 100);
      await stop([w]);
      const revived = (await slotJobs(app, 'gone')).slice(frozen.length);
      expect(revived.filter((j) => j.backfill)).toEqual([]);
      expect(revived[0].slot - frozen[frozen.length - 1].slot).toBeGreaterThanOrEqual(4_000);
      expectContiguous(revived);
    } finally {
      if (!w.dead) w.kill();
      await app.close();
    }
  });

  it('declarations lapsed for 7 days are deleted by a tick; shorter lapses and schedule() rows stay', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['tick'] });
    const daysAgo = (d: number) => app.db.dialect.timeParam(new Date(Date.now() - d * 86_400_000));
    try {
      for (const name of ['lapsed-8d', 'lapsed-6d', 'runtime']) await app.queue.schedule({ name, cron: '0 3 * * *', type: 'tick' });
      await app.db.run(sql`UPDATE job_queue_schedules SET declared_until = ${daysAgo(8)} WHERE name = 'lapsed-8d'`);
      await app.db.run(sql`UPDATE job_queue_schedules SET declared_until = ${daysAgo(6)} WHERE name = 'lapsed-6d'`);
      // A process that declares nothing and has never pruned prunes at its first tick.
      const ticking = await startQueueApp(db, { pollIntervalMs: 100 }, [Ticks]);
      try {
        await eventually('the 8-day lapse pruned', async () => !(await app.queue.listSchedules()).some((s) => s.name === 'lapsed-8d'), 20_000, 100);
      } finally {
        await ticking.close();
      }
      expect((await app.queue.listSchedules()).map((s) => s.name).filter((n) => n.startsWith('lapsed') || n === 'runtime')).toEqual(['lapsed-6d', 'runtime']);
    } finally {
      await app.close();
    }
  });

  it('a schedule() row and a @Recurring of the same name: the last to store it owns it', async () => {
    @Injectable()
    class Declares {
      @Recurring('0 3 * * *', { name: 'owned' })
      async run(_args: RecurringArgs): Promise<void> {}
    }
    const app = await startQueueApp(db, { worker: false, externalTypes: ['owned'] });
    try {
      // A row from before declarations existed, or made at run time: the decorator takes it over unchanged.
      await app.queue.schedule({ name: 'owned', cron: '0 3 * * *', type: 'owned' });
      const nextRunAt = (await app.queue.listSchedules()).find((s) => s.name === 'owned')!.nextRunAt;
      const declaring = await startQueueApp(db, { worker: false }, [Declares]);
      try {
        const view = (await app.queue.listSchedules()).find((s) => s.name === 'owned')!;
        expect(view.declaredUntil!.getTime()).toBeGreaterThan(Date.now());
        expect(view.nextRunAt).toEqual(nextRunAt);
        // And schedule() takes it back: kept until unschedule().
        expect((await app.queue.schedule({ name: 'owned', cron: '0 3 * * *', type: 'owned' })).declaredUntil).toBeNull();
      } finally {
        await declaring.close();
      }
    } finally {
      await app.queue.unschedule('owned');
      await app.close();
    }
  });

  it('1,000 broken rows due ahead of a healthy schedule: the healthy one still runs, the broken ones wait', async () => {
    const app = await startQueueApp(db, { pollIntervalMs: 100 }, [Ticks]);
    try {
      // More than a tick's batch (500), due for a minute, each with a cron no parser takes.
      const due = new Date(Date.now() - 60_000);
      for (let i = 0; i < 1_000; i += 500) {
        const rows = Array.from({ length: 500 }, (_, k) => `('broken-${i + k}', '* * * * * * *', 'UTC', 'tick', '{}', 'none', 10000, '{}', '2100-01-01 00:00:00', '2100-01-01 00:00:00', '2100-01-01 00:00:00')`);
        await app.rows(`INSERT INTO job_queue_schedules (name, cron, time_zone, job_type, args, backfill, misfire_grace_ms, job_options, next_run_at, created_at, updated_at)
          VALUES ${rows.join(', ')}`);
      }
      await app.db.run(sql`UPDATE job_queue_schedules SET next_run_at = ${app.db.dialect.timeParam(due)} WHERE name LIKE 'broken-%'`);
      await app.queue.schedule({ name: 'healthy', cron: EVERY_SECOND, type: 'tick' });
      await eventually('3 slots of the healthy schedule', async () => (await app.count(`job_key LIKE 'recurring:healthy:%'`)) >= 3, 20_000, 100);
      // The broken rows were moved out of the way (tried again later), not left at the head of the due ones.
      const now = app.db.dialect.timeParam(new Date());
      const { rows } = await app.db.run(sql`SELECT COUNT(*) AS n FROM job_queue_schedules WHERE name LIKE 'broken-%' AND next_run_at <= ${now}`);
      expect(Number(rows[0].n)).toBe(0);
      expect(await app.count(`job_key LIKE 'recurring:broken-%'`)).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('bad cron or time zone: InvalidScheduleError naming the schedule, nothing written', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['tick'], maxArgsBytes: 1_000 });
    const jobsBefore = await app.count();
    const named = `SELECT name FROM job_queue_schedules WHERE name IN ('seven', 'feb-30', 'mars', 'bf', 'huge', 'nightly-report')`;
    try {
      await expect(app.queue.schedule({ name: 'seven', cron: '* * * * * * *', type: 'tick' })).rejects.toThrow(InvalidScheduleError);
      await expect(app.queue.schedule({ name: 'seven', cron: '* * * * * * *', type: 'tick' })).rejects.toThrow(/"seven".*Too many fields/);
      // Parsed, but no slot ever comes.
      await expect(app.queue.schedule({ name: 'feb-30', cron: '0 0 30 2 *', type: 'tick' })).rejects.toThrow(/"feb-30".*never falls due/);
      await expect(app.queue.schedule({ name: 'mars', cron: '0 2 * * *', type: 'tick', timeZone: 'Mars/Base' })).rejects.toThrow(/"mars".*unknown time zone/);
      await expect(app.queue.schedule({ name: 'bf', cron: '0 2 * * *', type: 'tick', backfill: -1 })).rejects.toThrow(InvalidScheduleError);
      // The jobs it would enqueue are checked too: not at every tick, but now.
      await expect(app.queue.schedule({ name: 'huge', cron: '0 2 * * *', type: 'tick', args: { blob: 'x'.repeat(2_000) } })).rejects.toThrow(ArgsTooLargeError);
      // Args a database cannot store would fail every tick's insert, not only this schedule's.
      await expect(app.queue.schedule({ name: 'huge', cron: '0 2 * * *', type: 'tick', args: { note: 'nul\u0000' } })).rejects.toThrow(ArgsNotSerializableError);
      expect(await app.rows(named)).toEqual([]);
      expect(await app.count()).toBe(jobsBefore);
    } finally {
      await app.close();
    }

    @Injectable()
    class Broken {
      @Recurring('0 0 2 * * * *', { name: 'nightly-report', timeZone: 'Europe/Berlin' })
      async nightly(_args: RecurringArgs): Promise<void> {}
    }
    await expect(startQueueApp(db, {}, [Broken])).rejects.toThrow(/Recurring schedule "nightly-report": invalid cron expression/);
    const after = await startQueueApp(db, { worker: false, externalTypes: ['tick'] });
    try {
      expect(await after.rows(named)).toEqual([]);
    } finally {
      await after.close();
    }
  });
});

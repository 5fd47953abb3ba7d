import { Injectable } from '@nestjs/common';
import { InvalidCursorError, InvalidQueryError, JobHandler, UnrecoverableJobError, type GraphNode, type ScheduleFilter } from '../../lib';
import { sql } from '../../lib/database/sql';
import { lastRunIn } from '../../lib/recurring/last-slot-key.sql';
import { findSchedulePage } from '../../lib/recurring/schedule-page';
import { slotKey } from '../../lib/recurring/slot-key';
import { describeDialects } from '../support/describe-dialects';
import { explainText } from '../support/plan-reads';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

/** Every schedule name a filter selects, page by page through the cursor. */
async function allNames(app: QueueApp, filter: ScheduleFilter, limit = 50): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await app.queue.findSchedules(filter, { limit, cursor });
    out.push(...page.schedules.map((s) => s.name));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** Fails the runs whose args say so, for good (one attempt), and finishes the others. */
@Injectable()
class Runs {
  @JobHandler('run', { maxAttempts: 1 })
  async run(args: { fail?: boolean }): Promise<void> {
    if (args.fail) throw new UnrecoverableJobError('this schedule fails');
  }
}

/** The ticker's runs: the same, for a type of their own (the spec's tests share a database). */
@Injectable()
class Beats {
  @JobHandler('beat', { maxAttempts: 1 })
  async beat(args: { fail?: boolean }): Promise<void> {
    if (args.fail) throw new UnrecoverableJobError('this schedule fails');
  }
}

/** A slot with milliseconds, as a cron with seconds never makes, to prove the key's formatting. */
const slot = (day: number, ms = 0) => new Date(Date.UTC(2026, 0, 1 + day, 3, 0, 0, ms));

async function setLastSlot(app: QueueApp, name: string, at: Date): Promise<void> {
  await app.db.run(sql`UPDATE job_queue_schedules SET last_slot = ${app.db.dialect.timeParam(at)} WHERE name = ${name}`);
}

describeDialects('findSchedules({ lastRunState }): the schedules whose last slot\'s job is in a state', (db) => {
  it('lists by the last slot only (not earlier runs, nor a removed job, nor a schedule that never fired); other filters, pages, cursors; typed errors', async () => {
    const app = await startQueueApp(db, { pollIntervalMs: 50 }, [Runs]);
    try {
      // A cron whose next slot is a year away: the ticker enqueues nothing while the spec runs.
      const later = { cron: '0 0 1 1 *', type: 'run', args: {} };
      const names = ['a', 'a:b', 'b', 'c', 'd', 'e', 'f', 'g'];
      for (const name of names) await app.queue.schedule({ name, ...later, group: name === 'e' ? 'tenant-e' : 'shared' });
      // Slot jobs as the ticker enqueues them (key recurring:<name>:<slot>); the last slot decides.
      // b's job is cancelled below: it waits an hour, so that the worker cannot finish it first.
      const slotJob = async (name: string, at: Date, fail: boolean) =>
        (await app.queue.enqueue({ type: 'run', key: slotKey(name, at), args: { fail }, group: name === 'e' ? 'tenant-e' : 'shared', ...(name === 'b' ? { runAfter: new Date(Date.now() + 3_600_000) } : {}) })).id;
      const jobs: Record<string, number> = {};
      const runs: Array<[string, Date, boolean]> = [
        ['a', slot(0), false], ['a', slot(1, 123), true], // failing now
        ['a:b', slot(0), true], ['a:b', slot(1, 123), false], // failed before, fine now; its keys start with a's prefix
        ['b', slot(2, 7), false], // cancelled below
        ['d', slot(3), true], // failed, then removed
        ['e', slot(4, 999), true], // failing, another group
        ['f', slot(5), true], ['f', slot(6), false], // failed before, fine now
        ['g', slot(7), false], // its last slot is a later one that has no job (removed before the spec looked)
      ];
      for (const [name, at, fail] of runs) jobs[`${name}@${at.toISOString()}`] = await slotJob(name, at, fail);
      // A key a schedule could never have written, beside a's: not a's last slot.
      await app.queue.enqueue({ type: 'run', key: `recurring:a:${slot(1, 123).toISOString()}x`, args: {} });
      await app.queue.cancel(jobs[`b@${slot(2, 7).toISOString()}`]);
      for (const [name, at] of runs) await setLastSlot(app, name, at); // each name's latest, in order
      await setLastSlot(app, 'g', slot(8));
      await eventually('every run finished', async () => (await app.count(`state NOT IN ('done', 'failed', 'cancelled')`)) === 0, 30_000, 50);
      await app.queue.remove(jobs[`d@${slot(3).toISOString()}`]);

      expect(await allNames(app, { lastRunState: 'failed' })).toEqual(['a', 'e']);
      expect(await allNames(app, { lastRunState: ['failed'] }, 1)).toEqual(['a', 'e']); // two pages by cursor
      expect(await allNames(app, { lastRunState: ['failed', 'cancelled'] })).toEqual(['a', 'b', 'e']);
      expect(await allNames(app, { lastRunState: ['cancelled', 'failed'] }, 2)).toEqual(['a', 'b', 'e']);
      expect(await allNames(app, { lastRunState: 'done' })).toEqual(['a:b', 'f']);
      expect(await allNames(app, { lastRunState: ['waiting', 'ready', 'leased', 'running'] })).toEqual([]);
      expect(await allNames(app, { lastRunState: 'failed', group: 'shared' })).toEqual(['a']);
      expect(await allNames(app, { lastRunState: 'failed', group: 'tenant-e', type: 'run' })).toEqual(['e']);
      expect(await allNames(app, { lastRunState: 'failed', type: 'other' })).toEqual([]);
      expect(await allNames(app, { lastRunState: 'failed', name: 'a:b' })).toEqual([]);
      expect(await allNames(app, { lastRunState: 'done', name: 'a:b' })).toEqual(['a:b']);
      // The whole schedules the page reads, with their definitions.
      const [a] = (await app.queue.findSchedules({ lastRunState: 'failed' }, { limit: 1 })).schedules;
      expect(a).toMatchObject({ name: 'a', cron: later.cron, lastRunAt: slot(1, 123) });

      // A cursor belongs to its filter; one without lastRunState keeps its old form.
      const page = await app.queue.findSchedules({ lastRunState: 'failed' }, { limit: 1 });
      await expect(app.queue.findSchedules({ lastRunState: 'done' }, { limit: 1, cursor: page.nextCursor })).rejects.toThrow(InvalidCursorError);
      await expect(app.queue.findSchedules({}, { limit: 1, cursor: page.nextCursor })).rejects.toThrow(InvalidCursorError);
      const plain = await app.queue.findSchedules({ group: 'shared' }, { limit: 2 });
      expect((await app.queue.findSchedules({ group: 'shared' }, { limit: 50, cursor: plain.nextCursor })).schedules.map((s) => s.name)).toEqual(['b', 'c', 'd', 'f', 'g']);

      // Bad input: a typed error naming the field; nothing read.
      for (const bad of ['broken', [], ['failed', 'nope'], 42, null, { state: 'failed' }]) {
        await expect(app.queue.findSchedules({ lastRunState: bad } as unknown as ScheduleFilter)).rejects.toThrow(InvalidQueryError);
      }
      await expect(app.queue.findSchedules({ lastRunState: 'nope' } as unknown as ScheduleFilter)).rejects.toThrow(/lastRunState/);
      await expect(app.queue.findSchedules({ lastRun: 'failed' } as unknown as ScheduleFilter)).rejects.toThrow(/filter\.lastRun\b/);
    } finally {
      await app.close();
    }
  });

  it('the ticker\'s own slots: a schedule whose runs fail is listed as failing, one whose runs succeed as done', async () => {
    const app = await startQueueApp(db, { pollIntervalMs: 50 }, [Beats]);
    try {
      await app.queue.schedule({ name: 'tick.bad', cron: '* * * * * *', type: 'beat', args: { fail: true } });
      await app.queue.schedule({ name: 'tick.ok', cron: '* * * * * *', type: 'beat', args: { fail: false } });
      await eventually('two slots of each', async () => (await app.count(`type = 'beat' AND job_key LIKE 'recurring:tick.bad:%'`)) >= 2 && (await app.count(`type = 'beat' AND job_key LIKE 'recurring:tick.ok:%'`)) >= 2, 30_000, 100);
      // The same schedules with a yearly cron: no more slots, the last ones stay.
      for (const name of ['tick.bad', 'tick.ok']) await app.queue.schedule({ name, cron: '0 0 1 1 *', type: 'beat', args: { fail: name === 'tick.bad' } });
      await eventually('every run finished', async () => (await app.count(`state NOT IN ('done', 'failed', 'cancelled')`)) === 0, 30_000, 50);
      expect(await allNames(app, { lastRunState: 'failed', type: 'beat' })).toEqual(['tick.bad']);
      expect(await allNames(app, { lastRunState: 'done', type: 'beat' })).toEqual(['tick.ok']);
      // The job the filter found is the last slot's: the newest of the schedule's runs.
      for (const name of ['tick.bad', 'tick.ok']) {
        const [s] = (await app.queue.findSchedules({ name })).schedules;
        const [newest] = (await app.queue.find({ schedule: name }, { limit: 1 })).jobs;
        expect(newest.key).toBe(slotKey(name, s.lastRunAt!));
      }
    } finally {
      await app.close();
    }
  });

  it('at scale: 10,000 schedules, each with a last slot job, 10 of them cancelled; one lookup per schedule in the key\'s index', async () => {
    const SCHEDULES = 10_000;
    const app = await startQueueApp(db, { worker: false, externalTypes: ['refresh'] });
    try {
      const name = (n: number) => `tenant-${String(n).padStart(5, '0')}.refresh`;
      const last = new Date(Date.UTC(2026, 11, 1, 3));
      const t = (d: Date) => app.db.dialect.timeParam(d);
      for (let i = 0; i < SCHEDULES; i += 1_000) {
        const rows = Array.from({ length: Math.min(1_000, SCHEDULES - i) }, (_, k) =>
          // Rows as queue.schedule() stores them, after a tick that enqueued `last`.
          sql`(${name(i + k)}, '0 3 * * *', 'UTC', 'refresh', '{}', 'none', 10000, '{}', ${t(new Date(last.getTime() + 86_400_000))}, ${t(last)}, ${t(last)}, ${t(last)})`,
        );
        await app.db.run(sql`INSERT INTO job_queue_schedules (name, cron, time_zone, job_type, args, backfill, misfire_grace_ms, job_options, next_run_at, last_slot, created_at, updated_at)
          VALUES ${sql.join(rows)}`);
      }
      const nodes: GraphNode[] = Array.from({ length: SCHEDULES }, (_, n) => ({ ref: `s${n}`, type: 'refresh', key: slotKey(name(n), last), args: {} }));
      const ids: Record<string, number> = await app.queue.enqueueGraph(nodes);
      const cancelled = [17, 1_234, 2_000, 3_333, 4_999, 5_000, 6_001, 7_777, 8_888, 9_999];
      for (const n of cancelled) await app.queue.cancel(ids[`s${n}`]);

      const started = performance.now();
      expect(await allNames(app, { lastRunState: 'cancelled', type: 'refresh' })).toEqual(cancelled.map(name));
      const walkMs = performance.now() - started;
      expect(await allNames(app, { lastRunState: 'cancelled', type: 'refresh' }, 4)).toEqual(cancelled.map(name));
      const ready = await app.queue.findSchedules({ lastRunState: 'ready', type: 'refresh' }, { limit: 500 });
      expect(ready.schedules).toHaveLength(500);
      expect(ready.schedules[0].name).toBe(name(0));

      // The plans, for a rare state (10 jobs) and a common one (9,990): jobs are read through an
      // index, the key's, one lookup per schedule, never scanned whole; here the statistics are from
      // before the jobs were written (no ANALYZE since), as after a bulk load.
      for (const state of ['cancelled', 'ready'] as const) {
        const statement = sql`SELECT name FROM job_queue_schedules WHERE job_type = 'refresh' AND ${lastRunIn(app.db.dialect, [state])} ORDER BY name LIMIT 51`;
        const plan = await explainText(app, db.dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN', statement);
        if (db.dialect === 'sqlite') expect(plan).toMatch(/SEARCH jobs USING INDEX jobs_job_key_uq/);
        if (db.dialect === 'mysql') expect(plan).toMatch(/jobs_job_key_uq/);
        if (db.dialect === 'postgres') expect(plan).toMatch(/Index Scan using jobs_job_key_uq on jobs/);
        expect(plan).not.toMatch(db.dialect === 'postgres' ? /Seq Scan on jobs/ : db.dialect === 'sqlite' ? /SCAN jobs/ : /\bALL\b.*jobs|jobs.*\bALL\b/);
      }

      // What a first page costs: the walk over every schedule it takes to fill it (none here).
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        await findSchedulePage(app.db, { lastRunState: 'failed', type: 'refresh' }, { limit: 50 }, sql`name`);
        times.push(performance.now() - t0);
      }
      times.sort((x, y) => x - y);
      console.log(`[${db.dialect}] findSchedules({ lastRunState }) over ${SCHEDULES} schedules: a page that finds none ${times[2].toFixed(1)} ms (median of 5), the walk of 10 cancelled ${walkMs.toFixed(0)} ms`);
    } finally {
      await app.close();
    }
  }, 300_000);
});

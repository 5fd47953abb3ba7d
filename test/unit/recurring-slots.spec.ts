import { MAX_ON_TIME_SLOTS, planSlots, type SlotPlanInput } from '../../lib/recurring/recurring-slots';
import { defineSchedule, isScheduleName, MAX_SCHEDULE_NAME_LENGTH } from '../../lib/recurring/schedule-definition';
import { InvalidScheduleError } from '../../lib/errors';

const EVERY_SECOND = '* * * * * *';
const at = (iso: string) => new Date(iso);
const iso = (plan: ReturnType<typeof planSlots>) => plan.slots.map((s) => `${s.at.toISOString()}${s.backfill ? ' (backfill)' : ''}`);

function plan(over: Partial<SlotPlanInput>) {
  return planSlots({ cron: EVERY_SECOND, timeZone: 'UTC', from: at('2026-01-01T00:00:00Z'), now: at('2026-01-01T00:00:00.400Z'), misfireGraceMs: 1_000, backfill: 'none', ...over });
}

describe('planSlots', () => {
  it('enqueues the slot that just came due and names the next one', () => {
    const p = plan({});
    expect(iso(p)).toEqual(['2026-01-01T00:00:00.000Z']);
    expect(p.next.toISOString()).toBe('2026-01-01T00:00:01.000Z');
  });

  it('nothing before the first slot is due', () => {
    const p = plan({ from: at('2026-01-01T00:00:01Z') });
    expect(p.slots).toEqual([]);
    expect(p.next.toISOString()).toBe('2026-01-01T00:00:01.000Z');
  });

  it('a late tick within the grace still enqueues every slot since the last one', () => {
    const p = plan({ now: at('2026-01-01T00:00:02.500Z'), misfireGraceMs: 5_000 });
    expect(iso(p)).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:02.000Z']);
    expect(p.next.toISOString()).toBe('2026-01-01T00:00:03.000Z');
  });

  describe('after downtime (slots older than the grace were missed)', () => {
    const down = { from: at('2026-01-01T00:00:00Z'), now: at('2026-01-01T00:00:10.500Z'), misfireGraceMs: 1_000 };
    it("'none' skips the missed slots and keeps the on-time one", () => {
      expect(iso(plan({ ...down, backfill: 'none' }))).toEqual(['2026-01-01T00:00:10.000Z']);
    });
    it("'last' adds the latest missed slot", () => {
      expect(iso(plan({ ...down, backfill: 'last' }))).toEqual(['2026-01-01T00:00:09.000Z (backfill)', '2026-01-01T00:00:10.000Z']);
    });
    it('a number adds that many of the latest missed slots', () => {
      expect(iso(plan({ ...down, backfill: 3 }))).toEqual([
        '2026-01-01T00:00:07.000Z (backfill)',
        '2026-01-01T00:00:08.000Z (backfill)',
        '2026-01-01T00:00:09.000Z (backfill)',
        '2026-01-01T00:00:10.000Z',
      ]);
    });
    it('a number larger than the gap adds all of it, never slots before `from`', () => {
      expect(plan({ ...down, backfill: 100 }).slots.filter((s) => s.backfill)).toHaveLength(10);
    });
    it('a week-long outage of a per-second schedule stays cheap', () => {
      const started = Date.now();
      const p = plan({ from: at('2026-01-01T00:00:00Z'), now: at('2026-01-08T00:00:00.500Z'), backfill: 5 });
      expect(p.slots).toHaveLength(6);
      expect(p.slots[4].at.toISOString()).toBe('2026-01-07T23:59:59.000Z');
      expect(Date.now() - started).toBeLessThan(5_000); // a walk from `from` would be 600k steps
    });
  });

  describe('a long tick (thousands of schedules due at once)', () => {
    // The slot came due at 00:00:00; the process, ticking since before it, reaches this schedule
    // 30 s later, still working through the others: the slot is late, not missed.
    const late = { from: at('2026-01-01T00:00:00Z'), now: at('2026-01-01T00:00:30.400Z'), misfireGraceMs: 1_000, cron: '0 * * * * *' };
    it('judges lateness from when the process began ticking, not from now', () => {
      const p = plan({ ...late, tickingSince: at('2026-01-01T00:00:00.400Z') });
      expect(iso(p)).toEqual(['2026-01-01T00:00:00.000Z']);
      expect(p.missed).toBe(false);
      expect(p.next.toISOString()).toBe('2026-01-01T00:01:00.000Z');
    });
    it('without it, the same slot counts as missed and backfill none skips it', () => {
      const p = plan(late);
      expect(p.slots).toEqual([]);
      expect(p.missed).toBe(true);
    });
    it('a process that began ticking after the grace (it was down) still misses it', () => {
      expect(plan({ ...late, tickingSince: at('2026-01-01T00:00:05Z') }).missed).toBe(true);
    });
    it('slots that came due while it ticked are on time', () => {
      const p = plan({ ...late, cron: EVERY_SECOND, from: at('2026-01-01T00:00:29Z'), tickingSince: at('2026-01-01T00:00:00.400Z') });
      expect(iso(p)).toEqual(['2026-01-01T00:00:29.000Z', '2026-01-01T00:00:30.000Z']);
      expect(p.missed).toBe(false);
    });
  });

  it('a schedule left behind for a day while the process ticked on: the latest 1,000 slots, the rest missed', () => {
    const started = Date.now();
    const p = plan({ from: at('2026-01-01T00:00:00Z'), now: at('2026-01-02T00:00:00.500Z'), tickingSince: at('2025-12-31T00:00:00Z'), backfill: 5 });
    expect(p.slots).toHaveLength(MAX_ON_TIME_SLOTS);
    expect(p.slots.filter((s) => s.backfill)).toEqual([]);
    expect(p.slots[0].at.toISOString()).toBe('2026-01-01T23:43:21.000Z');
    expect(p.slots[MAX_ON_TIME_SLOTS - 1].at.toISOString()).toBe('2026-01-02T00:00:00.000Z');
    expect(p.next.toISOString()).toBe('2026-01-02T00:00:01.000Z');
    expect(p.missed).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000); // a walk over the day would be 86,400 steps
    // Exactly the bound still counts as on time.
    const full = plan({ from: at('2026-01-01T00:00:00Z'), now: at('2026-01-01T00:16:39.500Z'), tickingSince: at('2025-12-31T00:00:00Z') });
    expect([full.slots.length, full.missed]).toEqual([MAX_ON_TIME_SLOTS, false]);
  });

  it('reports no missed slot when none lies between `from` and the cutoff', () => {
    // `from` is long before the cutoff, but the hourly cron has no slot in between.
    const p = plan({ cron: '0 * * * *', from: at('2026-01-01T00:00:00.001Z'), now: at('2026-01-01T00:59:59Z'), misfireGraceMs: 1_000 });
    expect(p.slots).toEqual([]);
    expect(p.missed).toBe(false);
    expect(p.next.toISOString()).toBe('2026-01-01T01:00:00.000Z');
  });

  describe('time zones and DST (Europe/Berlin)', () => {
    const berlin = { timeZone: 'Europe/Berlin', misfireGraceMs: 0, backfill: 'none' as const };
    it('reads the cron in the zone: 02:00 Berlin is 01:00 UTC in winter, 00:00 UTC in summer', () => {
      expect(plan({ ...berlin, cron: '0 2 * * *', now: at('2026-01-15T12:00:00Z') }).next.toISOString()).toBe('2026-01-16T01:00:00.000Z');
      expect(plan({ ...berlin, cron: '0 2 * * *', now: at('2026-07-15T12:00:00Z') }).next.toISOString()).toBe('2026-07-16T00:00:00.000Z');
    });
    it('spring forward (29 March 2026): 02:30 does not exist; the slot runs once, at 03:00 CEST', () => {
      const days = walk('30 2 * * *', 'Europe/Berlin', at('2026-03-27T12:00:00Z'), 4);
      expect(days).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z']);
    });
    it('fall back (25 October 2026): 02:30 happens twice; the daily slot runs once', () => {
      const days = walk('30 2 * * *', 'Europe/Berlin', at('2026-10-23T12:00:00Z'), 4);
      expect(days).toEqual(['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z']);
    });
    it('a tick across the fall-back hour enqueues each distinct instant once', () => {
      const p = planSlots({ cron: '0 * * * *', timeZone: 'Europe/Berlin', from: at('2026-10-24T23:00:00Z'), now: at('2026-10-25T02:30:00Z'), misfireGraceMs: 86_400_000, backfill: 'none' });
      expect(iso(p)).toEqual(['2026-10-24T23:00:00.000Z', '2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T02:00:00.000Z']);
    });
  });
});

function walk(cron: string, timeZone: string, from: Date, n: number): string[] {
  const out: string[] = [];
  let now = from;
  for (let i = 0; i < n; i++) {
    now = planSlots({ cron, timeZone, from: now, now, misfireGraceMs: 0, backfill: 'none' }).next;
    out.push(now.toISOString());
  }
  return out;
}

describe('defineSchedule', () => {
  const ok = { name: 'nightly-report', cron: '0 2 * * *', type: 'nightly-report' };
  it('accepts 5- and 6-field crons and IANA zones, with defaults', () => {
    expect(defineSchedule({ ...ok, timeZone: 'Europe/Berlin' })).toMatchObject({ timeZone: 'Europe/Berlin', backfill: 'none', misfireGraceMs: 10_000 });
    expect(defineSchedule({ ...ok, cron: '*/5 * * * * *' }).timeZone).toBe('UTC');
  });
  it.each([
    [{ ...ok, cron: '* * * * * * *' }, /nightly-report.*invalid cron expression.*Too many fields/],
    [{ ...ok, cron: '61 * * * *' }, /invalid cron expression/],
    [{ ...ok, cron: '0 0 30 2 *' }, /nightly-report.*never falls due/],
    [{ ...ok, cron: '0 0 31 4,6,9,11 *', timeZone: 'Europe/Berlin' }, /never falls due/],
    [{ ...ok, timeZone: 'Mars/Olympus_Mons' }, /nightly-report.*unknown time zone "Mars\/Olympus_Mons"/],
    [{ ...ok, backfill: 0 }, /backfill must be/],
    [{ ...ok, backfill: 'all' }, /backfill must be/],
    [{ ...ok, name: 'has space' }, /name must be/],
    [{ ...ok, name: 'x'.repeat(300) }, /name must be/],
    [{ ...ok, args: { slot: 'mine' } }, /must not contain `slot`/],
    [{ ...ok, maxAttempts: 0 }, /maxAttempts/],
  ])('rejects %j with InvalidScheduleError', (input, message) => {
    expect(() => defineSchedule(input as never)).toThrow(InvalidScheduleError);
    expect(() => defineSchedule(input as never)).toThrow(message);
  });
});

describe('isScheduleName', () => {
  it('accepts what defineSchedule accepts, and nothing a lookup should send to the database', () => {
    const longest = 'n'.repeat(MAX_SCHEDULE_NAME_LENGTH);
    for (const name of ['nightly-report', 'tenant-7.refresh', 'a:b_c', longest]) {
      expect([name.slice(0, 20), isScheduleName(name)]).toEqual([name.slice(0, 20), true]);
      expect(defineSchedule({ name, cron: '0 2 * * *', type: 't' }).name).toBe(name);
    }
    for (const name of ['', 'has space', 'nul\u0000byte', '<script>', 'a/b', `${longest}n`, 42, null, undefined, { name: 'x' }]) {
      expect([name, isScheduleName(name)]).toEqual([name, false]);
      expect(() => defineSchedule({ name, cron: '0 2 * * *', type: 't' } as never)).toThrow(InvalidScheduleError);
    }
  });
});

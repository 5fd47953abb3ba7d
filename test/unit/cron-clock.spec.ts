import { jest } from '@jest/globals';
import { CronTime } from 'cron';
import { CronClock } from '../../lib/recurring/cron-clock';

describe('CronClock', () => {
  const cases: Array<[string, string, string]> = [
    ['*/15 * * * *', 'UTC', '2026-03-01T10:07:00Z'],
    ['30 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z'], // across spring forward
    ['30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z'], // across fall back
    ['0 9 * * 1-5', 'America/New_York', '2026-11-27T20:00:00Z'],
  ];

  it.each(cases)('gives the cron package’s answers (%s in %s)', (cron, zone, from) => {
    const clock = new CronClock();
    const time = new CronTime(cron, zone);
    let mine = new Date(from);
    let theirs = new Date(from);
    for (let i = 0; i < 5; i++) {
      mine = clock.next(cron, zone, mine);
      theirs = time.getNextDateFrom(theirs, zone).toJSDate();
      expect(mine.toISOString()).toBe(theirs.toISOString());
    }
  });

  it('answers a repeated question from its memo, and hands out copies', () => {
    const clock = new CronClock();
    const after = new Date('2026-01-01T00:00:00Z');
    const first = clock.next('*/15 * * * *', 'Europe/Berlin', after);
    const spy = jest.spyOn(CronTime.prototype, 'getNextDateFrom');
    try {
      for (let i = 0; i < 1_000; i++) expect(clock.next('*/15 * * * *', 'Europe/Berlin', after).getTime()).toBe(first.getTime());
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
    first.setTime(0); // a caller's change does not reach the memo
    expect(clock.next('*/15 * * * *', 'Europe/Berlin', after).toISOString()).toBe('2026-01-01T00:15:00.000Z');
  });

  it('keys on the zone: the same cron in two zones has two answers', () => {
    const clock = new CronClock();
    const after = new Date('2026-01-15T12:00:00Z');
    expect(clock.next('0 2 * * *', 'UTC', after).toISOString()).toBe('2026-01-16T02:00:00.000Z');
    expect(clock.next('0 2 * * *', 'Europe/Berlin', after).toISOString()).toBe('2026-01-16T01:00:00.000Z');
  });
});

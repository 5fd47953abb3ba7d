import { InvalidCursorError, InvalidQueryError } from '../../lib';
import { decodeCursor, decodeKeyCursor, encodeCursor, encodeKeyCursor } from '../../lib/query/find-cursor';
import { MAX_SCHEDULE_NAME_LENGTH } from '../../lib/recurring/schedule-definition';
import { normalizeScheduleFilter, scheduleFilterText } from '../../lib/recurring/schedule-filter';
import { DEFAULT_STATS_LIST, MAX_STATS_LIST, normalizeStatsOptions } from '../../lib/stats/stats-options';

describe('normalizeStatsOptions', () => {
  it('fills the defaults and keeps what is given', () => {
    expect(normalizeStatsOptions(undefined)).toEqual({ windowMs: 300_000, groupsLimit: DEFAULT_STATS_LIST, schedulesLimit: DEFAULT_STATS_LIST });
    expect(normalizeStatsOptions({ windowMs: 1, groupsLimit: MAX_STATS_LIST, schedulesLimit: 1 })).toEqual({ windowMs: 1, groupsLimit: 1_000, schedulesLimit: 1 });
  });

  it.each([
    ['a zero window', { windowMs: 0 }, 'windowMs'],
    ['a fractional window', { windowMs: 1.5 }, 'windowMs'],
    ['a window past a year', { windowMs: 367 * 86_400_000 }, 'windowMs'],
    ['no groups', { groupsLimit: 0 }, 'groupsLimit'],
    ['too many groups', { groupsLimit: 1_001 }, 'groupsLimit'],
    ['groups as text', { groupsLimit: '10' }, 'groupsLimit'],
    ['too many schedules', { schedulesLimit: 10_000 }, 'schedulesLimit'],
    ['an unknown option', { limit: 5 }, 'options.limit'],
    ['not an object', 'everything', 'options'],
  ])('refuses %s with an InvalidQueryError naming the field', (_label, raw, field) => {
    expect(() => normalizeStatsOptions(raw)).toThrow(InvalidQueryError);
    try {
      normalizeStatsOptions(raw);
    } catch (err) {
      expect((err as InvalidQueryError).field).toBe(field);
    }
  });
});

describe('normalizeScheduleFilter', () => {
  it('accepts no filter, a name, a type or a group', () => {
    expect(normalizeScheduleFilter(undefined)).toEqual({});
    expect(normalizeScheduleFilter({ name: 'tenant-7.refresh' })).toEqual({ name: 'tenant-7.refresh' });
    expect(normalizeScheduleFilter({ name: 'n'.repeat(MAX_SCHEDULE_NAME_LENGTH), type: 'refresh' })).toEqual({ name: 'n'.repeat(MAX_SCHEDULE_NAME_LENGTH), type: 'refresh' });
    expect(normalizeScheduleFilter({})).toEqual({});
    expect(normalizeScheduleFilter({ type: 'refresh' })).toEqual({ type: 'refresh' });
    expect(normalizeScheduleFilter({ type: 'refresh', group: 'acme' })).toEqual({ type: 'refresh', group: 'acme' });
    expect(normalizeScheduleFilter({ group: undefined })).toEqual({});
  });

  it('takes lastRunState as one state or a list, sorted without repeats', () => {
    expect(normalizeScheduleFilter({ lastRunState: 'failed' })).toEqual({ lastRunState: ['failed'] });
    expect(normalizeScheduleFilter({ lastRunState: ['failed', 'cancelled', 'failed'], group: 'acme' })).toEqual({ lastRunState: ['cancelled', 'failed'], group: 'acme' });
  });

  it.each([
    ['an unknown field', { slot: 'x' }, 'filter.slot'],
    ['an empty name', { name: '' }, 'name'],
    ['a name longer than any schedule can have', { name: 'n'.repeat(MAX_SCHEDULE_NAME_LENGTH + 1) }, 'name'],
    ['a name with a NUL', { name: 'a\u0000b' }, 'name'],
    ['an empty type', { type: '' }, 'type'],
    ['a type that is not text', { type: 7 }, 'type'],
    ['an empty group', { group: '' }, 'group'],
    ['a group past 200 characters', { group: 'g'.repeat(201) }, 'group'],
    ['an array', ['refresh'], 'filter'],
    ['a last run state that is no state', { lastRunState: 'broken' }, 'lastRunState'],
    ['an empty list of last run states', { lastRunState: [] }, 'lastRunState'],
    ['a list with one bad state', { lastRunState: ['failed', 'nope'] }, 'lastRunState'],
    ['a last run state that is not text', { lastRunState: 3 }, 'lastRunState'],
  ])('refuses %s', (_label, raw, field) => {
    expect(() => normalizeScheduleFilter(raw)).toThrow(InvalidQueryError);
    try {
      normalizeScheduleFilter(raw);
    } catch (err) {
      expect((err as InvalidQueryError).field).toBe(field);
    }
  });
});

describe('key cursors (findSchedules)', () => {
  const filter = scheduleFilterText({ type: 'refresh' });

  it('hashes a filter without a name as before the name existed, so such cursors stay valid', () => {
    expect(scheduleFilterText({ type: 'refresh' })).toBe(JSON.stringify(['schedules', 'refresh', null]));
    expect(scheduleFilterText({ name: 'n' })).toBe(JSON.stringify(['schedules', null, null, 'n']));
  });

  it('tells filters apart by their last run states', () => {
    const texts = [{}, { lastRunState: ['failed' as const] }, { lastRunState: ['cancelled' as const, 'failed' as const] }, { name: 'n' }, { name: 'n', lastRunState: ['failed' as const] }].map(scheduleFilterText);
    expect(new Set(texts).size).toBe(texts.length);
  });

  it('carries any name, dots and colons included', () => {
    for (const name of ['a', 'tenant-7.refresh', 'x:y.z_0-9', 'Z'.repeat(220)]) expect(decodeKeyCursor(encodeKeyCursor(name, filter), filter)).toBe(name);
  });

  it('refuses an altered cursor, one of another filter, and a find() cursor', () => {
    const cursor = encodeKeyCursor('tenant-7.refresh', filter);
    const payload = Buffer.from(cursor, 'base64url').toString('utf8').split('.');
    payload[1] = Buffer.from('tenant-8.refresh').toString('base64url');
    const forged = Buffer.from(payload.join('.')).toString('base64url');
    expect(() => decodeKeyCursor(forged, filter)).toThrow(/altered/);
    expect(() => decodeKeyCursor(cursor, scheduleFilterText({}))).toThrow(/different filter/);
    expect(() => decodeKeyCursor(cursor, scheduleFilterText({ type: 'refresh', group: 'acme' }))).toThrow(/different filter/);
    expect(() => decodeKeyCursor(cursor, scheduleFilterText({ type: 'refresh', name: 'tenant-7.refresh' }))).toThrow(/different filter/);
    expect(() => decodeKeyCursor(encodeCursor(5, filter), filter)).toThrow(InvalidCursorError);
    expect(() => decodeCursor(cursor, filter)).toThrow(InvalidCursorError);
    expect(() => decodeKeyCursor('%%%', filter)).toThrow(InvalidCursorError);
    expect(() => decodeKeyCursor('A'.repeat(2_000), filter)).toThrow(InvalidCursorError);
  });
});

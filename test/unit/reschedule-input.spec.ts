import { InvalidJobError } from '../../lib/errors';
import { normalizeReschedule } from '../../lib/query/reschedule-input';

describe('normalizeReschedule', () => {
  const at = new Date('2026-12-24T18:00:00Z');

  it('takes runAfter, priority or both, and leaves the other unchanged (null)', () => {
    expect(normalizeReschedule({ runAfter: at })).toEqual({ runAfter: at, priority: null });
    expect(normalizeReschedule({ priority: 0 })).toEqual({ runAfter: null, priority: 0 });
    expect(normalizeReschedule({ runAfter: at, priority: 2_147_483_647 })).toEqual({ runAfter: at, priority: 2_147_483_647 });
    expect(normalizeReschedule({ runAfter: new Date(0) }).runAfter).toEqual(new Date(0)); // the past: due now
  });

  it.each([
    [undefined, /a plain object/],
    [null, /a plain object/],
    [[], /a plain object/],
    [new Map(), /a plain object/],
    [{}, /at least one of runAfter, priority/],
    [{ runAfter: undefined }, /at least one/],
    [{ delayMs: 1_000 }, /"delayMs" must be absent/],
    [{ priority: 1, args: {} }, /"args" must be absent/],
    [{ runAfter: '2026-12-24T18:00:00Z' }, /"runAfter" must be a valid Date/],
    [{ runAfter: new Date('nonsense') }, /"runAfter" must be a valid Date/],
    [{ runAfter: new Date('+010000-01-01T00:00:00Z') }, /"runAfter" must be a valid Date from 1000/],
    [{ priority: -1 }, /"priority" must be an integer from 0 to 2147483647/],
    [{ priority: 1.5 }, /"priority" must be an integer/],
    [{ priority: '3' }, /"priority" must be an integer/],
    [{ priority: 2_147_483_648 }, /"priority" must be an integer/],
  ])('refuses %p with InvalidJobError', (input, message) => {
    expect(() => normalizeReschedule(input)).toThrow(InvalidJobError);
    expect(() => normalizeReschedule(input)).toThrow(message);
  });
});

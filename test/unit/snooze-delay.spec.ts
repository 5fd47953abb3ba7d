import { InvalidJobError } from '../../lib/errors/job.errors';
import { MAX_SNOOZE_MS, SnoozeJobError, snoozeDelayMs } from '../../lib/handlers/job-abort.errors';

describe('snoozeDelayMs', () => {
  it('takes 0 to 365 days, rounded up to whole milliseconds', () => {
    expect(snoozeDelayMs(0)).toBe(0);
    expect(snoozeDelayMs(0.1)).toBe(1);
    expect(snoozeDelayMs(30_000)).toBe(30_000);
    expect(snoozeDelayMs(MAX_SNOOZE_MS)).toBe(MAX_SNOOZE_MS);
    expect(MAX_SNOOZE_MS).toBe(31_536_000_000);
  });

  it('refuses anything else with InvalidJobError naming the bound', () => {
    for (const bad of [-1, -0.5, MAX_SNOOZE_MS + 1, Number.NaN, Number.POSITIVE_INFINITY, '10', null, undefined, 10n, {}]) {
      expect(() => snoozeDelayMs(bad)).toThrow(InvalidJobError);
      expect(() => snoozeDelayMs(bad)).toThrow('"snooze delayMs" must be a number of milliseconds from 0 to 31536000000 (365 days)');
    }
  });

  it('SnoozeJobError carries the delay as stored, its code and a message saying so', () => {
    const err = new SnoozeJobError(1_500.2);
    expect(err).toMatchObject({ name: 'SnoozeJobError', code: 'SNOOZE', delayMs: 1_501, message: 'snoozed for 1501 ms' });
    expect(() => new SnoozeJobError(-1)).toThrow(InvalidJobError);
  });
});

import { MAX_SCHEDULE_NAME_LENGTH } from '../../lib/recurring/schedule-definition';
import { slotKey, slotOfKey } from '../../lib/recurring/slot-key';

describe('slotKey / slotOfKey', () => {
  it('reads back the schedule and slot of every key a schedule writes, colons in the name included', () => {
    const slot = new Date('2026-12-07T03:00:00.000Z');
    for (const name of ['nightly', 'tenant-7.refresh', 'a:b:c', 'x:2026-12-07T03:00:00.000Z', 'n'.repeat(MAX_SCHEDULE_NAME_LENGTH)]) {
      const key = slotKey(name, slot);
      expect(key.length).toBeLessThanOrEqual(255);
      expect(slotOfKey(key)).toEqual({ name, slot });
    }
    expect(slotKey('nightly', slot)).toBe('recurring:nightly:2026-12-07T03:00:00.000Z');
  });

  it.each([
    ['no key', null],
    ['a key of the application', 'order-42'],
    ['no slot', 'recurring:nightly'],
    ['no name', 'recurring::2026-12-07T03:00:00.000Z'],
    ['a slot in another form', 'recurring:nightly:2026-12-07T03:00:00Z'],
    ['a date that does not exist', 'recurring:nightly:2026-02-30T03:00:00.000Z'],
    ['text where the slot goes', 'recurring:nightly:yesterday-at-three-oclock!'],
    ['a name no schedule may have', 'recurring:night ly:2026-12-07T03:00:00.000Z'],
    ['another prefix', 'Recurring:nightly:2026-12-07T03:00:00.000Z'],
  ])('names no schedule for %s', (_label, key) => {
    expect(slotOfKey(key)).toBeNull();
  });
});

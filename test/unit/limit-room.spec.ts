import { describe, expect, it } from '@jest/globals';
import { groupsAtCap, roomUnderCaps, type InFlight } from '../../lib/claim/limit-room';
import { inLockOrder } from '../../lib/claim/lock-order';
import { hasKeys } from '../../lib/options/has-keys';

const inFlight = (pairs: Array<[group: string, type: string, n: number]>): InFlight => {
  const byGroup = new Map<string, number>();
  const byType = new Map<string, number>();
  let total = 0;
  for (const [g, t, n] of pairs) {
    byGroup.set(g, (byGroup.get(g) ?? 0) + n);
    byType.set(t, (byType.get(t) ?? 0) + n);
    total += n;
  }
  return { total, byGroup, byType };
};

describe('roomUnderCaps', () => {
  const limits = { global: 10, types: { email: 3 }, groups: { acme: 2, globex: 1, initech: 4 } };
  const flying = inFlight([['acme', 'email', 2], ['globex', 'sms', 1], ['other', 'email', 1]]);

  it('gives the global and every capped type their room, and only the capped groups asked for', () => {
    expect(roomUnderCaps(limits, flying, ['acme', 'initech', 'uncapped'])).toEqual({ total: 6, types: { email: 0 }, groups: { acme: 0, initech: 4 } });
  });

  it('names no group when none is asked for: their room is forecast apart (groupsAtCap)', () => {
    expect(roomUnderCaps(limits, flying, [])).toEqual({ total: 6, types: { email: 0 }, groups: {} });
  });

  it('is unlimited in total without a global cap', () => {
    expect(roomUnderCaps({ groups: { acme: 2 } }, flying, ['acme']).total).toBe(Infinity);
  });

  it('does not take a group named like an Object.prototype member for a capped one', () => {
    expect(roomUnderCaps({ groups: { acme: 2 } }, flying, ['constructor', 'toString']).groups).toEqual({});
    expect(groupsAtCap({ groups: { acme: 2 } }, inFlight([['constructor', 'x', 5]]))).toEqual([]);
  });
});

describe('groupsAtCap', () => {
  it('lists the capped groups with as many in flight as their cap, or more, reading only what is in flight', () => {
    const limits = { groups: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`t${i}`, 2])) };
    expect(groupsAtCap(limits, inFlight([['t1', 'x', 2], ['t2', 'x', 1], ['t3', 'x', 3], ['free', 'x', 9]])).sort()).toEqual(['t1', 't3']);
  });
});

describe('inLockOrder', () => {
  it('puts global first, then the types, then the groups, by name within each', () => {
    expect(inLockOrder(['group:b', 'type:z', 'group:a', 'global', 'type:a', 'group:type:x'])).toEqual(['global', 'type:a', 'type:z', 'group:a', 'group:b', 'group:type:x']);
  });

  it('ranks by the prefix, not by the name: a group named "global" is a group', () => {
    expect(inLockOrder(['group:global', 'type:t', 'global'])).toEqual(['global', 'type:t', 'group:global']);
  });
});

describe('hasKeys', () => {
  it('tells an empty options object from one that names something, own keys only', () => {
    expect(hasKeys(undefined)).toBe(false);
    expect(hasKeys({})).toBe(false);
    expect(hasKeys(Object.create({ inherited: 1 }))).toBe(false);
    expect(hasKeys({ acme: 1 })).toBe(true);
  });
});

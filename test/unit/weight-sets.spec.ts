import { claimWeightsOf, WEIGHTS_IN_CALL_MAX, weightSetId } from '../../lib/claim/weight-sets.sql';

const tenants = (n: number): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`tenant-${i}`, 1 + (i % 4)]));

describe('group weight sets (PostgreSQL, many groupWeights)', () => {
  it('names a set by its content, whatever the order of its keys', () => {
    const weights = tenants(500);
    const reversed = Object.fromEntries(Object.entries(weights).reverse());
    expect(weightSetId(reversed)).toBe(weightSetId(weights));
    expect(weightSetId({ ...weights, 'tenant-3': 7 })).not.toBe(weightSetId(weights));
    expect(weightSetId({ ...weights, extra: 1 })).not.toBe(weightSetId(weights));
    expect(weightSetId(weights)).toMatch(/^w1:[0-9a-f]{40}$/);
  });

  it('carries a few weights in the call and names a stored set for more, once per options object', () => {
    const few = claimWeightsOf(tenants(WEIGHTS_IN_CALL_MAX));
    expect([few.count, few.setId, few.groups.text.startsWith('{"tenant-0"')]).toEqual([WEIGHTS_IN_CALL_MAX, null, true]);
    const many = tenants(WEIGHTS_IN_CALL_MAX + 1);
    const stored = claimWeightsOf(many);
    expect([stored.count, stored.setId, stored.groups.text, stored.weights.text]).toEqual([WEIGHTS_IN_CALL_MAX + 1, weightSetId(many), '{}', '{}']);
    expect(claimWeightsOf(many)).toBe(stored);
    expect(claimWeightsOf(undefined)).toEqual({ count: 0, groups: expect.anything(), weights: expect.anything(), setId: null });
  });
});

import { rotationCursorName, rotationCursorOf } from '../../lib/claim/rotation-cursor';

describe('rotationCursorName', () => {
  it('names one cursor per set of types, whatever their order and repeats', () => {
    const name = rotationCursorName(['b', 'a']);
    expect(name).toMatch(/^fair-share:[0-9a-f]{40}$/);
    expect(rotationCursorName(['a', 'b', 'a'])).toBe(name);
    expect(rotationCursorName(['a'])).not.toBe(name);
    expect(rotationCursorName(['a,b'])).not.toBe(rotationCursorName(['a', 'b']));
  });

  it('fits the 64-character name column for any set', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => `type-${'x'.repeat(150)}-${i}`);
    expect(rotationCursorName(many).length).toBeLessThanOrEqual(64);
    expect(rotationCursorName([...many].reverse())).toBe(rotationCursorName(many));
  });

  it('a claim follows the cursor it names, else that of its types', () => {
    const base = { owner: 'w', quotas: [], leaseTtlMs: 1_000, rotation: 3 };
    expect(rotationCursorOf({ ...base, types: ['a'] })).toBe(rotationCursorName(['a']));
    expect(rotationCursorOf({ ...base, types: ['a'], rotationCursor: rotationCursorName(['a', 'b']) })).toBe(rotationCursorName(['a', 'b']));
  });
});

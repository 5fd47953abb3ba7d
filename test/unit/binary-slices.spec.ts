import { binarySlices } from '../../lib/database/binary-slices';

describe('binarySlices', () => {
  it('cuts consecutive power-of-two slices, largest first, keeping every item in order', () => {
    const items = Array.from({ length: 700 }, (_, i) => i);
    const slices = binarySlices(items);
    expect(slices.map((s) => s.length)).toEqual([512, 128, 32, 16, 8, 4]);
    expect(slices.flat()).toEqual(items);
    expect(binarySlices([])).toEqual([]);
    expect(binarySlices(['a'])).toEqual([['a']]);
    expect(binarySlices([1, 2, 3]).map((s) => s.length)).toEqual([2, 1]);
  });

  it('needs at most 11 distinct sizes for every batch up to 1,000 (one statement text each)', () => {
    const sizes = new Set<number>();
    for (let n = 1; n <= 1_000; n++) {
      const slices = binarySlices(Array.from({ length: n }, (_, i) => i));
      expect(slices.reduce((a, s) => a + s.length, 0)).toBe(n);
      expect(slices.length).toBeLessThanOrEqual(10);
      for (const s of slices) sizes.add(s.length);
    }
    expect([...sizes].sort((a, b) => a - b)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512]);
  });
});

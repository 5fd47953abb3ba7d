import { BIND_LIMITS, chunkIds, waiterChunkSize, WAITER_CHUNK } from '../../lib/waiters/id-chunks';
import { WaiterRegistry } from '../../lib/waiters/waiter-registry';

describe('chunkIds', () => {
  it('splits in order into runs of at most the size', () => {
    expect(chunkIds([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunkIds([1, 2], 2)).toEqual([[1, 2]]);
    expect(chunkIds([], 3)).toEqual([]);
  });

  it('covers 100,000 ids in ten statements, each under every bind limit', () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => i + 1);
    for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
      const chunks = chunkIds(ids, waiterChunkSize(dialect));
      expect(chunks).toHaveLength(10);
      expect(chunks.flat()).toEqual(ids);
      expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(BIND_LIMITS[dialect]);
    }
    expect(waiterChunkSize('sqlite')).toBe(WAITER_CHUNK);
    expect(waiterChunkSize('sqlite', 32_000)).toBe(766);
  });

  it('refuses a size below 1', () => {
    expect(() => chunkIds([1], 0)).toThrow(RangeError);
  });
});

describe('WaiterRegistry', () => {
  it('finds, takes and removes watches by id in O(1), counting watches and ids', () => {
    const r = new WaiterRegistry<{ id: number; name: string }>();
    const a = { id: 1, name: 'a' };
    const b = { id: 1, name: 'b' };
    const c = { id: 2, name: 'c' };
    [a, b, c, a].forEach((w) => r.add(w)); // adding twice is a no-op
    expect([r.size, r.idCount]).toEqual([3, 2]);
    expect(r.ids().sort()).toEqual([1, 2]);
    expect(r.remove(b)).toBe(true);
    expect(r.remove(b)).toBe(false);
    expect(r.take(1)).toEqual([a]);
    expect(r.has(1)).toBe(false);
    expect(r.take(1)).toEqual([]);
    expect([r.size, r.idCount]).toEqual([1, 1]);
    expect(r.clear()).toEqual([c]);
    expect([r.size, r.idCount]).toEqual([0, 0]);
  });
});

import { chunked } from '../../lib/database/sql';
import { WAITER_CHUNK } from '../../lib/waiters/id-chunks';
import { sliceBySize } from '../../lib/waiters/size-slices';
import { forEachPayloadId } from '../../lib/waiters/settled-payload';
import { sortByState } from '../../lib/waiters/sort-by-state';
import { WaiterRegistry } from '../../lib/waiters/waiter-registry';

describe('WAITER_CHUNK', () => {
  it('covers 100,000 ids in ten statements', () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => i + 1);
    const chunks = chunked(ids, WAITER_CHUNK);
    expect(chunks).toHaveLength(10);
    expect(chunks.flat()).toEqual(ids);
  });
});

describe('sliceBySize', () => {
  const sized = (...bytes: number[]) => bytes.map((b, i) => ({ id: i + 1, bytes: b }));

  it('cuts by bytes and by ids, in order, a larger-than-limit row alone', () => {
    expect(sliceBySize(sized(4, 4, 4, 20, 1, 1, 1), 10, 100)).toEqual([[1, 2], [3], [4], [5, 6, 7]]);
    expect(sliceBySize(sized(0, 0, 0, 0, 0), 10, 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(sliceBySize([], 10, 2)).toEqual([]);
  });

  it('10,000 settled rows of 1 MB: reads of 8 MB, not one of 10 GB', () => {
    const slices = sliceBySize(sized(...Array.from({ length: 10_000 }, () => 1024 * 1024)), 8 * 1024 * 1024, 10_000);
    expect(slices).toHaveLength(1_250);
    expect(Math.max(...slices.map((s) => s.length))).toBe(8);
    expect(slices.flat()).toHaveLength(10_000);
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

  it('holds a single watch of an id without a Set, and grows and shrinks through one', () => {
    const r = new WaiterRegistry<{ id: number }>();
    const a = { id: 7 };
    const b = { id: 7 };
    r.add(a);
    r.add(a);
    expect([r.size, r.idCount, r.get(7)]).toEqual([1, 1, [a]]);
    expect(r.remove(b)).toBe(false);
    r.add(b);
    expect(r.get(7)).toEqual([a, b]);
    expect(r.remove(a)).toBe(true);
    expect(r.remove(a)).toBe(false);
    expect([r.size, r.get(7)]).toEqual([1, [b]]);
    r.get(7).pop(); // a copy
    expect(r.take(7)).toEqual([b]);
    expect([r.size, r.idCount, r.get(7)]).toEqual([0, 0, []]);
  });
});

describe('sortByState', () => {
  it('sorts rows into settled and open, and names the ids that were not found', () => {
    const rows = [
      { id: 1, state: 'done' },
      { id: 2, state: 'running' },
      { id: 3, state: 'failed' },
      { id: 5, state: 'waiting' },
      { id: 6, state: 'cancelled' },
      { id: 7, state: 'ready' },
      { id: 8, state: 'leased' },
    ];
    const out = sortByState([1, 2, 3, 4, 5, 6, 7, 8, 9], rows);
    expect(out.settled.map((r) => r.id)).toEqual([1, 3, 6]);
    expect(out.open.map((r) => r.id)).toEqual([2, 5, 7, 8]);
    expect(out.missing).toEqual([4, 9]);
  });

  it('keeps the rows it was given (whole job views pass through)', () => {
    const view = { id: 1, state: 'done', result: { url: 'x' } };
    expect(sortByState([1], [view]).settled[0]).toBe(view);
    expect(sortByState([], [])).toEqual({ settled: [], open: [], missing: [] });
  });
});

describe('forEachPayloadId', () => {
  const ids = (payload: string) => {
    const out: number[] = [];
    forEachPayloadId(payload, (id) => out.push(id));
    return out;
  };

  it('reads the ids of a settled-channel payload as numbers', () => {
    expect(ids('12,345,6789')).toEqual([12, 345, 6789]);
    expect(ids('7')).toEqual([7]);
    expect(ids('9007199254740991')).toEqual([Number.MAX_SAFE_INTEGER]);
    expect(ids('')).toEqual([]);
    expect(ids('1,,2,')).toEqual([1, 2]);
  });

  it('stops at anything that is not an id list', () => {
    expect(ids('1,2x,3')).toEqual([1]);
    expect(ids('r')).toEqual([]);
  });
});

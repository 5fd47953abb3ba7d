import { byLoad, trimBusiest, type GroupLoad } from '../../lib/stats/busiest-groups';

describe('the busiest groups, kept bounded while streamed', () => {
  const g = (group: string, ready: number, running = 0): GroupLoad => ({ group, ready, running });

  it('orders by ready + in flight, then by name in the databases\' byte order', () => {
    // U+FF21 (3 UTF-8 bytes, one UTF-16 unit) sorts before U+1F600 (4 bytes, a surrogate pair) in
    // bytes, but after it in UTF-16 units.
    const list = [g('b', 1, 1), g('\u{1F600}', 2), g('\uFF21', 2), g('a', 2), g('c', 3)];
    expect(list.sort(byLoad).map((x) => x.group)).toEqual(['c', 'a', 'b', '\uFF21', '\u{1F600}']);
  });

  it('trims to the limit only past twice the limit, or when forced', () => {
    const many = Array.from({ length: 7 }, (_, i) => g(`t${i}`, i));
    expect(trimBusiest([...many].slice(0, 6), 3)).toHaveLength(6);
    expect(trimBusiest([...many], 3).map((x) => x.group)).toEqual(['t6', 't5', 't4']);
    expect(trimBusiest(many.slice(0, 2), 3, true).map((x) => x.group)).toEqual(['t1', 't0']);
  });

  it('streaming 100,000 groups through it keeps the same top as sorting them all', () => {
    const all = Array.from({ length: 100_000 }, (_, i) => g(`tenant-${i}`, (i * 7919) % 1_000, i % 3));
    let kept: GroupLoad[] = [];
    let most = 0;
    for (const x of all) {
      kept.push(x);
      kept = trimBusiest(kept, 100);
      most = Math.max(most, kept.length);
    }
    expect(trimBusiest(kept, 100, true)).toEqual([...all].sort(byLoad).slice(0, 100));
    expect(most).toBeLessThanOrEqual(201);
  });
});

import { idsByCount } from '../../lib/finalize/ids-by-count';

describe('idsByCount', () => {
  it('groups ids by their count, each group in id order', () => {
    const grouped = idsByCount(new Map([[9, 1], [3, 2], [5, 1], [1, 1], [7, 2]]));
    expect([...grouped.entries()]).toEqual([[1, [1, 5, 9]], [2, [3, 7]]]);
  });

  it('gives an empty map for no ids', () => {
    expect(idsByCount([]).size).toBe(0);
  });
});

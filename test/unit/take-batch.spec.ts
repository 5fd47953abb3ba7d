import { takeBatch } from '../../lib/finalize/take-batch';

const size = (s: string) => s.length;

describe('takeBatch', () => {
  it('takes up to maxItems from the front and leaves the rest', () => {
    const queue = ['a', 'b', 'c', 'd', 'e'];
    expect(takeBatch(queue, 3, 1_000, size)).toEqual(['a', 'b', 'c']);
    expect(queue).toEqual(['d', 'e']);
  });

  it('stops before the item that would exceed maxBytes', () => {
    const queue = ['aaaa', 'bbbb', 'cc', 'd'];
    expect(takeBatch(queue, 10, 9, size)).toEqual(['aaaa', 'bbbb']);
    expect(takeBatch(queue, 10, 9, size)).toEqual(['cc', 'd']);
    expect(queue).toEqual([]);
  });

  it('sends an item larger than the budget alone, never leaving it behind', () => {
    const queue = ['x'.repeat(50), 'y', 'z'.repeat(60), 'w'];
    expect(takeBatch(queue, 10, 10, size)).toEqual(['x'.repeat(50)]);
    expect(takeBatch(queue, 10, 10, size)).toEqual(['y']);
    expect(takeBatch(queue, 10, 10, size)).toEqual(['z'.repeat(60)]);
    expect(takeBatch(queue, 10, 10, size)).toEqual(['w']);
  });

  it('returns nothing from an empty queue', () => {
    expect(takeBatch([], 10, 10, size)).toEqual([]);
  });
});

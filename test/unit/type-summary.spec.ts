import { summarizeTypes } from '../../lib/dashboard/type-summary';

describe('summarizeTypes', () => {
  const none = { open: false, failed: false };

  it('adds up each type: waiting, ready, leased and running (in flight together), failed', () => {
    const open = [
      { type: 'email', state: 'ready', n: '7' }, // drivers return counts as text or bigint-ish strings
      { type: 'email', state: 'leased', n: 2 },
      { type: 'email', state: 'running', n: 3 },
      { type: 'report', state: 'waiting', n: 4 },
    ];
    const failed = [{ type: 'email', n: 1 }, { type: 'charge', n: 9 }];
    expect(summarizeTypes(open, failed, 50, none)).toEqual({
      types: [
        { type: 'email', waiting: 0, ready: 7, running: 5, failed: 1 },
        { type: 'report', waiting: 4, ready: 0, running: 0, failed: 0 },
        { type: 'charge', waiting: 0, ready: 0, running: 0, failed: 9 },
      ],
      partial: false,
    });
  });

  it('orders by open work, then failed, then name (code units, as the database may not)', () => {
    const open = [{ type: 'b', state: 'ready', n: 1 }, { type: 'a', state: 'ready', n: 1 }, { type: 'B', state: 'ready', n: 1 }];
    const failed = [{ type: 'z', n: 2 }, { type: 'y', n: 3 }, { type: 'b', n: 1 }];
    expect(summarizeTypes(open, failed, 50, none).types.map((t) => t.type)).toEqual(['b', 'B', 'a', 'y', 'z']);
  });

  it('shows the first `limit`, and is partial past it or when a read stopped at its cap', () => {
    const open = Array.from({ length: 60 }, (_, i) => ({ type: `t${String(i).padStart(2, '0')}`, state: 'ready', n: 60 - i }));
    const r = summarizeTypes(open, [], 50, none);
    expect(r.types.map((t) => t.type)).toEqual(open.slice(0, 50).map((o) => o.type));
    expect(r.partial).toBe(true);
    expect(summarizeTypes(open.slice(0, 50), [], 50, none).partial).toBe(false);
    expect(summarizeTypes([], [], 50, { open: true, failed: false }).partial).toBe(true);
    expect(summarizeTypes([], [], 50, { open: false, failed: true }).partial).toBe(true);
    expect(summarizeTypes([], [], 50, none)).toEqual({ types: [], partial: false });
  });
});

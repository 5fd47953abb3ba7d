import { writeIsolatingFailures, type WriteErrorAction } from '../../lib/finalize/isolate-failures';

class Refused extends Error {}
class Flaky extends Error {}

/** A fake database: refuses any write containing a poisoned item, all or nothing. */
function fakeDb(poisoned: Set<number>, flakyFirst = 0) {
  const committed: number[] = [];
  const writes: number[][] = [];
  let flaky = flakyFirst;
  return {
    committed,
    writes,
    write: async (items: number[]) => {
      writes.push(items);
      if (flaky > 0) {
        flaky--;
        throw new Flaky('connection lost');
      }
      const bad = items.find((i) => poisoned.has(i));
      if (bad !== undefined) throw new Refused(`row ${bad} refused`);
      committed.push(...items);
      return items.length;
    },
  };
}

const classify = (err: unknown): WriteErrorAction => (err instanceof Flaky ? 'retry' : err instanceof Refused ? 'split' : 'give-up');
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('writeIsolatingFailures', () => {
  it('writes a clean batch in one write', async () => {
    const db = fakeDb(new Set());
    const out = await writeIsolatingFailures(range(500), { write: db.write, onError: classify });
    expect(out).toEqual({ refused: [], abandoned: [], writes: 1 });
    expect(db.committed).toEqual(range(500));
  });

  it('finds one refused item among 500 in about 2·log2(n) writes; every other item is written exactly once', async () => {
    const db = fakeDb(new Set([137]));
    const written: number[][] = [];
    const out = await writeIsolatingFailures(range(500), { write: db.write, onError: classify, onWritten: (items) => written.push(items) });
    expect(out.refused).toEqual([{ item: 137, error: expect.any(Refused) }]);
    expect((out.refused[0].error as Error).message).toBe('row 137 refused');
    expect(out.abandoned).toEqual([]);
    expect(out.writes).toBeLessThanOrEqual(1 + 2 * Math.ceil(Math.log2(500)));
    expect([...db.committed].sort((a, b) => a - b)).toEqual(range(500).filter((i) => i !== 137));
    expect(db.committed).toEqual(range(500).filter((i) => i !== 137)); // in order, left half first
    expect(written.flat()).toEqual(db.committed);
  });

  it('isolates several refused items, including neighbours and the ends', async () => {
    const poisoned = new Set([0, 1, 64, 199]);
    const db = fakeDb(poisoned);
    const out = await writeIsolatingFailures(range(200), { write: db.write, onError: classify });
    expect(out.refused.map((r) => r.item)).toEqual([0, 1, 64, 199]);
    expect(db.committed).toEqual(range(200).filter((i) => !poisoned.has(i)));
  });

  it('refuses a batch of one item without splitting', async () => {
    const db = fakeDb(new Set([7]));
    const out = await writeIsolatingFailures([7], { write: db.write, onError: classify });
    expect(out).toMatchObject({ refused: [{ item: 7 }], writes: 1 });
  });

  it('retries transient errors on the same items, passing the attempt count', async () => {
    const db = fakeDb(new Set(), 3);
    const attempts: number[] = [];
    const out = await writeIsolatingFailures(range(10), {
      write: db.write,
      onError: (err, items, attempt) => {
        attempts.push(attempt);
        expect(items).toEqual(range(10));
        return classify(err);
      },
    });
    expect(attempts).toEqual([0, 1, 2]);
    expect(out).toEqual({ refused: [], abandoned: [], writes: 4 });
    expect(db.committed).toEqual(range(10));
  });

  it('a transient error in the middle of a split retries only that half; written halves stay written once', async () => {
    const db = fakeDb(new Set([9]));
    let flakyOnce = true;
    const out = await writeIsolatingFailures(range(16), {
      write: async (items) => {
        if (flakyOnce && items.length === 8 && items[0] === 8) {
          flakyOnce = false;
          throw new Flaky('connection lost');
        }
        return db.write(items);
      },
      onError: classify,
    });
    expect(out.refused.map((r) => r.item)).toEqual([9]);
    expect(db.committed).toEqual(range(16).filter((i) => i !== 9));
  });

  it('gives up on the items the caller abandons and goes on with the rest', async () => {
    const db = fakeDb(new Set([3]));
    const out = await writeIsolatingFailures(range(8), {
      write: db.write,
      onError: (_err, items) => (items.length === 2 ? 'give-up' : 'split'),
    });
    expect(out.abandoned.map((a) => a.items)).toEqual([[2, 3]]);
    expect(db.committed).toEqual([0, 1, 4, 5, 6, 7]);
  });

  it('does nothing for an empty batch', async () => {
    const db = fakeDb(new Set());
    expect(await writeIsolatingFailures([], { write: db.write, onError: classify })).toEqual({ refused: [], abandoned: [], writes: 0 });
    expect(db.writes).toEqual([]);
  });
});

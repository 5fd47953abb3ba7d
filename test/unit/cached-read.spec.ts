import { CachedRead } from '../../lib/stats/cached-read';

describe('CachedRead', () => {
  it('shares one read among concurrent callers and reuses it for ttl', async () => {
    let now = 0;
    let loads = 0;
    const cache = new CachedRead(async () => ++loads, 5_000, () => now);
    expect(await Promise.all(Array.from({ length: 10 }, () => cache.get()))).toEqual(Array(10).fill(1));
    now = 4_999;
    expect(await cache.get()).toBe(1);
    now = 5_000;
    expect(await cache.get()).toBe(2);
    expect(cache.reads).toBe(2);
  });
  it('fresh says whether get() would answer without a read; last is the value however old', async () => {
    let now = 0;
    let loads = 0;
    const cache = new CachedRead(async () => ++loads, 1_000, () => now);
    expect(cache.fresh).toBe(false);
    expect(cache.last).toBeUndefined();
    await cache.get();
    now = 999;
    expect(cache.fresh).toBe(true);
    now = 1_000;
    expect(cache.fresh).toBe(false);
    expect(cache.last).toBe(1); // stale, still there
    expect(loads).toBe(1); // asking does not read
  });
  it('does not cache a failure', async () => {
    let fail = true;
    const cache = new CachedRead(async () => { if (fail) throw new Error('down'); return 7; }, 5_000);
    await expect(cache.get()).rejects.toThrow('down');
    fail = false;
    expect(await cache.get()).toBe(7);
  });

  it('getWithin answers with the last value when a read is late or fails, and the late read still lands', async () => {
    let answer: ((n: number) => void) | undefined;
    let fail = false;
    let loads = 0;
    const cache = new CachedRead<number>(
      () => {
        loads++;
        if (fail) return Promise.reject(new Error('down'));
        return loads === 1 ? Promise.resolve(1) : new Promise((r) => (answer = r));
      },
      0,
    );
    expect(await cache.getWithin(1_000)).toBe(1);
    // The second read hangs: each caller gets the last value after its wait, and they share the read.
    expect(await cache.getWithin(20)).toBe(1);
    expect(await cache.getWithin(20)).toBe(1);
    expect(cache.reads).toBe(2);
    answer!(2);
    await new Promise((r) => setImmediate(r));
    fail = true;
    expect(await cache.getWithin(1_000)).toBe(2); // failed: the last value
    expect(await new CachedRead<number>(() => new Promise(() => undefined), 0).getWithin(10)).toBeUndefined();
  });

  it('with a pace, keeps a slow read factor times as long as it took, between ttl and the cap', async () => {
    let now = 0;
    let took = 0;
    let loads = 0;
    const cache = new CachedRead(
      async () => {
        now += took; // the read takes `took` ms of the clock
        return ++loads;
      },
      5_000,
      () => now,
      { factor: 100, maxMs: 300_000 },
    );
    took = 10; // 100 × 10 ms = 1 s, under the 5 s ttl: the ttl holds
    expect(await cache.get()).toBe(1);
    now = 5_000;
    took = 150; // a million finished rows: kept 15 s from the read's start
    expect(await cache.get()).toBe(2);
    now = 5_000 + 14_999;
    expect(await cache.get()).toBe(2);
    now = 5_000 + 15_000;
    took = 10_000; // 100 × 10 s would be 1,000 s: capped at 300 s
    expect(await cache.get()).toBe(3);
    now = 20_000 + 299_999;
    expect(await cache.get()).toBe(3);
    now = 20_000 + 300_000;
    expect(await cache.get()).toBe(4);
    expect(cache.reads).toBe(4);
  });
});

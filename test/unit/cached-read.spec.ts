import { CachedRead } from '../../lib/metrics/cached-read';

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
});

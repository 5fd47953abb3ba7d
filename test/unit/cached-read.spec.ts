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
});

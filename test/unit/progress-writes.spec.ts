import { ProgressWrites } from '../../lib/scheduler/progress-writes';

/** A write that ends when the test says so. */
function controlledWrites() {
  const calls: Array<{ id: number; percent: number; stage: string | null; end: (err?: Error) => void }> = [];
  const write = (id: number, percent: number, stage: string | null) =>
    new Promise<void>((resolve, reject) => calls.push({ id, percent, stage, end: (err) => (err ? reject(err) : resolve()) }));
  return { calls, writes: new ProgressWrites(write) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ProgressWrites', () => {
  it('calls made while a write is in flight: only the latest follows it, and all of them settle with that write', async () => {
    const { calls, writes } = controlledWrites();
    const settled: number[] = [];
    const first = writes.report(1, 10, 'a').then(() => settled.push(10));
    const later = [20, 30, 40].map((p) => writes.report(1, p, `s${p}`).then(() => settled.push(p)));
    expect(calls.map((c) => c.percent)).toEqual([10]);
    calls[0].end();
    await first;
    await tick();
    // Before: four writes at once, in no guaranteed order of arrival.
    expect(calls.map((c) => [c.percent, c.stage])).toEqual([
      [10, 'a'],
      [40, 's40'],
    ]);
    expect(settled).toEqual([10]);
    calls[1].end();
    await Promise.all(later);
    expect(settled).toEqual([10, 20, 30, 40]);
    // Idle again: the next call writes at once.
    void writes.report(1, 50, null);
    expect(calls.map((c) => c.percent)).toEqual([10, 40, 50]);
  });

  it('settled: at once for a job with no write; else once the write waiting behind the one in flight has ended too', async () => {
    const { calls, writes } = controlledWrites();
    expect(writes.settled(1)).toBeUndefined();
    void writes.report(1, 50, 'half');
    writes.report(1, 100, 'last').catch(() => undefined);
    let done = false;
    const settled = writes.settled(1)!.then(() => (done = true));
    calls[0].end();
    await tick();
    expect(calls.map((c) => c.stage)).toEqual(['half', 'last']);
    expect(done).toBe(false);
    calls[1].end(new Error('refused')); // a failed write ends it too
    await settled;
    expect(writes.settled(1)).toBeUndefined();
  });

  it('jobs do not wait for each other', () => {
    const { calls, writes } = controlledWrites();
    void writes.report(1, 10, null);
    void writes.report(2, 10, null);
    void writes.report(1, 20, null);
    expect(calls.map((c) => c.id)).toEqual([1, 2]);
  });

  it('a failed write rejects its own call and the ones waiting on the write that failed', async () => {
    const { calls, writes } = controlledWrites();
    const first = writes.report(1, 10, null);
    const second = writes.report(1, 20, null);
    calls[0].end(new Error('first'));
    await expect(first).rejects.toThrow('first');
    await tick();
    calls[1].end(new Error('second'));
    await expect(second).rejects.toThrow('second');
    void writes.report(1, 30, null);
    expect(calls.map((c) => c.percent)).toEqual([10, 20, 30]);
  });
});

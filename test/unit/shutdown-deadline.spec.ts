import { jest } from '@jest/globals';
import { MIN_DATABASE_WAIT_MS, ShutdownDeadline } from '../../lib/scheduler/shutdown-deadline';

describe('ShutdownDeadline', () => {
  const never = () => new Promise<void>(() => undefined);

  it('waits for work that settles in time and rethrows its failure', async () => {
    const passed: string[] = [];
    const deadline = new ShutdownDeadline(0, (what) => passed.push(what));
    expect(await deadline.wait(Promise.resolve(1), 'quick')).toBe(true);
    await expect(deadline.wait(Promise.reject(new Error('refused')), 'failing')).rejects.toThrow('refused');
    expect(passed).toEqual([]);
    expect(deadline.expired).toBe(false);
  });

  it('stops waiting at grace + max(grace, MIN_DATABASE_WAIT_MS), reports the first late work once, and waits no more after', async () => {
    jest.useFakeTimers();
    try {
      const passed: string[] = [];
      const deadline = new ShutdownDeadline(500, (what) => passed.push(what));
      let settled: boolean | undefined;
      void deadline.wait(never(), 'the running jobs').then((s) => (settled = s));
      await jest.advanceTimersByTimeAsync(500 + MIN_DATABASE_WAIT_MS - 1);
      expect(settled).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);
      expect(settled).toBe(false);
      expect(deadline.expired).toBe(true);
      // Past the deadline, later work is not waited for, and not reported again.
      const late = deadline.wait(never(), 'the last results');
      await jest.advanceTimersByTimeAsync(0);
      expect(await late).toBe(false);
      expect(passed).toEqual(['the running jobs']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('gives the database as long as the jobs when the grace is longer than the minimum', async () => {
    jest.useFakeTimers();
    try {
      const deadline = new ShutdownDeadline(10_000, () => undefined);
      let settled: boolean | undefined;
      void deadline.wait(never(), 'x').then((s) => (settled = s));
      await jest.advanceTimersByTimeAsync(19_999);
      expect(settled).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);
      expect(settled).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  it('a failure after the deadline is not unhandled', async () => {
    const deadline = new ShutdownDeadline(0, () => undefined);
    let reject!: (err: Error) => void;
    const work = new Promise<void>((_, r) => (reject = r));
    jest.useFakeTimers();
    try {
      const waiting = deadline.wait(work, 'x');
      await jest.advanceTimersByTimeAsync(MIN_DATABASE_WAIT_MS);
      expect(await waiting).toBe(false);
    } finally {
      jest.useRealTimers();
    }
    reject(new Error('too late'));
    await new Promise((r) => setImmediate(r));
  });
});

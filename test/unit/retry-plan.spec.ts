import { planRetry } from '../../lib/finalize/retry-plan';

const groups = (plan: ReturnType<typeof planRetry>) => Object.fromEntries([...plan.pending].sort(([a], [b]) => a - b));

describe('planRetry', () => {
  it('the retried root of a diamond is ready; its dependents wait on it and the sink on them, nobody is a suspect', () => {
    // root 1 (failed) → 2, 3 (cancelled) → 4 (cancelled); the walk saw every edge.
    const plan = planRetry(
      [4, 1, 3, 2],
      new Set(),
      [
        { id: 2, open: 1, bad: 1 },
        { id: 3, open: 1, bad: 1 },
        { id: 4, open: 2, bad: 2 },
      ],
      new Map([[2, 1], [3, 1], [4, 2]]),
    );
    expect(groups(plan)).toEqual({ 0: { ready: [1], waiting: [] }, 1: { ready: [], waiting: [2, 3] }, 2: { ready: [], waiting: [4] } });
    expect(plan.ready).toBe(1);
    expect(plan.suspects).toEqual([]);
  });

  it('a container is never made ready, even with no upstream to wait for', () => {
    const plan = planRetry([5, 6], new Set([5]), [], new Map());
    expect(groups(plan)).toEqual({ 0: { ready: [6], waiting: [5] } });
    expect(plan.ready).toBe(1);
  });

  it('a job with a failed upstream the retry does not reopen is a suspect', () => {
    // 7 depends on 1 (reopened, seen by the walk) and on 9 (failed for its own reasons).
    const plan = planRetry([1, 7], new Set(), [{ id: 7, open: 2, bad: 2 }], new Map([[7, 1]]));
    expect(plan.suspects).toEqual([7]);
    expect(groups(plan)).toEqual({ 0: { ready: [1], waiting: [] }, 2: { ready: [], waiting: [7] } });
  });

  it('without the walk’s edges every job with a bad upstream is a suspect', () => {
    const plan = planRetry([1, 2, 3], new Set(), [{ id: 2, open: 1, bad: 1 }, { id: 3, open: 1, bad: 0 }], new Map());
    expect(plan.suspects).toEqual([2]);
  });

  it('an upstream still running counts as open but not bad', () => {
    const plan = planRetry([2], new Set(), [{ id: 2, open: 1, bad: 0 }], new Map());
    expect(groups(plan)).toEqual({ 1: { ready: [], waiting: [2] } });
    expect(plan.suspects).toEqual([]);
    expect(plan.ready).toBe(0);
  });
});

import type { JobRecord } from '../../lib/database/job-row';
import { completedView } from '../../lib/finalize/completed-view';

/** A running job's row as the statement that completes it saw it, before its write. */
const BEFORE: JobRecord = {
  id: 7,
  type: 'render',
  ref: 'render',
  state: 'running',
  args: { reportId: 'r1' },
  result: null,
  attempts: 2,
  maxAttempts: 3,
  snoozes: 2,
  lastError: 'Error: first attempt fails',
  progress: 50,
  currentStage: 'half',
  group: 'acme',
  weight: 3,
  priority: 1,
  parentId: 4,
  isContainer: false,
  key: null,
  timeoutMs: 30_000,
  runAfter: new Date('2026-12-01T09:00:00.000Z'),
  createdAt: new Date('2026-12-01T08:59:59.000Z'),
  startedAt: new Date('2026-12-01T09:00:01.000Z'),
  finishedAt: null,
  updatedAt: new Date('2026-12-01T09:00:02.000Z'),
  leaseOwner: 'worker-1',
  leaseExpires: new Date('2026-12-01T09:00:31.000Z'),
};

describe('completedView', () => {
  it('applies what the complete writes: done, progress 100, the result, the write time as finished and updated; no lease', () => {
    const at = new Date('2026-12-01T09:00:03.123Z');
    const { leaseOwner: _owner, leaseExpires: _expires, ...rest } = BEFORE;
    expect(completedView(BEFORE, '{"url":"/r1.pdf","pages":[1,2]}', at)).toEqual({
      ...rest,
      state: 'done',
      progress: 100,
      result: { url: '/r1.pdf', pages: [1, 2] },
      finishedAt: at,
      updatedAt: at,
    });
  });

  it('keeps everything else of the row (attempt, last error, stage, start) and leaves the row itself alone', () => {
    const view = completedView(BEFORE, 'null', new Date(0));
    expect(view).toMatchObject({ attempts: 2, lastError: 'Error: first attempt fails', currentStage: 'half', startedAt: BEFORE.startedAt, result: null });
    expect(view).not.toHaveProperty('leaseOwner');
    expect(BEFORE.state).toBe('running');
  });
});

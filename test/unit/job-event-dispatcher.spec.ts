import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { JobEventDispatcher } from '../../lib/events/job-event.dispatcher';
import type { JobEventName } from '../../lib/events/job-event.types';
import type { JobSignal } from '../../lib/events/job-signal';
import type { JobView } from '../../lib/job.types';

const view = { id: 7, type: 't' } as JobView;
const signal = (id: number): JobSignal => ({ event: 'completed', id, at: 0, view: { ...view, id } });

describe('JobEventDispatcher', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs a listener that throws or rejects with anything, and goes on with the next events', async () => {
    // A null-prototype object has no text: String() of it threw inside the catch (the rest of the
    // batch was not delivered) and inside the rejection handler (an unhandled rejection: Node's
    // default ended the process).
    const logged: string[] = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => void logged.push(String(message)));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const heard: number[] = [];
      const listeners = new Map<JobEventName, Array<{ name: string; call: (job: JobView) => unknown }>>([
        [
          'completed',
          [
            { name: 'Sync.throws', call: (job) => { if (job.id === 1) throw Object.create(null); } },
            { name: 'Async.rejects', call: async (job) => { if (job.id === 2) throw Object.create(null); } },
            { name: 'Error.like', call: (job) => { if (job.id === 3) throw { message: 'a plain object with a message' }; } },
            { name: 'Heard.all', call: (job) => void heard.push(job.id) },
          ],
        ],
      ]);
      new JobEventDispatcher(listeners).deliver([signal(1), signal(2), signal(3)]);
      await new Promise((r) => setTimeout(r, 20));
      expect(heard).toEqual([1, 2, 3]);
      expect(unhandled).toEqual([]);
      expect(logged).toEqual([
        "@OnJobEvent('completed') listener Sync.throws threw for job 1: [object Object]",
        "@OnJobEvent('completed') listener Error.like threw for job 3: a plain object with a message",
        "@OnJobEvent('completed') listener Async.rejects threw for job 2: [object Object]",
      ]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

import { Injectable, Scope } from '@nestjs/common';
import { ContextIdFactory, type ContextId, type ContextIdStrategy, type HostComponentInfo } from '@nestjs/core';
import { JobHandler, type JobRef } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/** An app's durable-tree strategy, keyed by the job's group (a tenant), as it would key HTTP requests by a header. */
const perGroup = new Map<string, ContextId>();
class JobGroupStrategy implements ContextIdStrategy {
  attach(contextId: ContextId, request: { job?: JobRef }) {
    const group = request.job?.context.group;
    if (!group) return () => contextId;
    const durable = perGroup.get(group) ?? ContextIdFactory.create();
    perGroup.set(group, durable);
    return { resolve: (info: HostComponentInfo) => (info.isTreeDurable ? durable : contextId), payload: request };
  }
}

let created = 0;

@Injectable({ scope: Scope.REQUEST, durable: true })
class TenantJobs {
  readonly instance = ++created;

  @JobHandler('durable')
  async run(): Promise<number> {
    return this.instance;
  }
}

describeDialects(
  'job-scoped handlers with a durable ContextIdStrategy',
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      ContextIdFactory.apply(new JobGroupStrategy());
      app = await startQueueApp(db, { pollIntervalMs: 20 }, [TenantJobs]);
    });
    afterAll(() => app?.close());

    it('reuses one durable handler instance per group, as the app-wide strategy says', async () => {
      const jobs = await Promise.all(['a', 'a', 'a', 'b', 'b'].map((group) => app.queue.enqueue({ type: 'durable', group })));
      const results = await Promise.all(jobs.map(async (j) => (await app.queue.waitFor(j.id, { timeoutMs: 20_000 })).result));
      expect(new Set(results.slice(0, 3)).size).toBe(1);
      expect(new Set(results.slice(3)).size).toBe(1);
      expect(results[0]).not.toBe(results[3]);
    });
  },
  ['sqlite'],
);

import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { JobHandler, JobQueueService, OnJobEvent, type JobEventDetail, type JobView } from '../../lib';
import { JobQueueTester, JobQueueTestingModule } from 'nestjs-sql-job-queue/testing';

@Injectable()
class Handlers {
  @JobHandler('t-ok') async ok(): Promise<string> {
    return 'fine';
  }
  @JobHandler('t-bad', { maxAttempts: 1 }) async bad(): Promise<void> {
    throw new Error('nope');
  }
}

@Injectable()
class Listener {
  heard: string[] = [];
  @OnJobEvent('completed') completed(job: JobView) { this.heard.push(`completed:${job.type}:${String(job.result)}`); }
  @OnJobEvent('failed') failed(job: JobView, d: JobEventDetail) { this.heard.push(`failed:${job.type}:${d.error}`); }
}

describe('[sqlite] @OnJobEvent with the testing module', () => {
  it('tester.drain() resolves after the listeners have heard every change', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [JobQueueTestingModule.forRoot()], providers: [Handlers, Listener] }).compile();
    await moduleRef.init();
    try {
      const queue = moduleRef.get(JobQueueService);
      await queue.enqueue({ type: 't-ok' });
      await queue.enqueue({ type: 't-bad' });
      await moduleRef.get(JobQueueTester).drain();
      expect(moduleRef.get(Listener).heard.sort()).toEqual(['completed:t-ok:fine', expect.stringMatching(/^failed:t-bad:.*nope/)]);
    } finally {
      await moduleRef.close();
    }
  });
});

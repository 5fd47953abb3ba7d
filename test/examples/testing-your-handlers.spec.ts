// The README's "Testing your handlers" example, verbatim: it must keep working as written.
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { JobContext, JobHandler, JobQueueService } from 'nestjs-sql-job-queue';
import { JobQueueTester, JobQueueTestingModule } from 'nestjs-sql-job-queue/testing';

@Injectable()
class ReportJobs {
  attempts = 0;

  @JobHandler('fetch', { maxAttempts: 3 })
  async fetch(args: { url: string }): Promise<{ bytes: number }> {
    if (++this.attempts === 1) throw new Error('flaky network'); // retried with backoff
    return { bytes: args.url.length };
  }

  @JobHandler('render')
  async render(args: { title: string }, ctx: JobContext): Promise<{ summary: string }> {
    await ctx.progress(50, 'rendering');
    const { fetch } = await ctx.upstream<{ fetch: { bytes: number } }>();
    ctx.log(`rendering ${args.title} from ${fetch.bytes} bytes`);
    return { summary: `${args.title}: ${fetch.bytes} bytes` };
  }
}

describe('ReportJobs', () => {
  let moduleRef: TestingModule;
  let queue: JobQueueService;
  let tester: JobQueueTester;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [JobQueueTestingModule.forRoot()], // a temporary SQLite file, removed on close
      providers: [ReportJobs],
    }).compile();
    await moduleRef.init(); // discovers the handlers and starts the worker
    queue = moduleRef.get(JobQueueService);
    tester = moduleRef.get(JobQueueTester);
  });

  afterEach(() => moduleRef.close());

  it('runs the whole graph, retries included, without waiting for the backoff', async () => {
    const ids = await queue.enqueueGraph([
      { ref: 'fetch', type: 'fetch', args: { url: 'https://example.com' } },
      { ref: 'render', type: 'render', args: { title: 'Q3' }, dependsOn: ['fetch'] },
    ]);

    await tester.drain(); // runs everything runnable, dependents and retries too

    expect(await queue.get(ids.fetch)).toMatchObject({ state: 'done', attempts: 2 });
    expect(await queue.get(ids.render)).toMatchObject({ state: 'done', result: { summary: 'Q3: 19 bytes' } });
  });

  it('calls one handler directly with a real JobContext', async () => {
    const result = await tester.run('render', { title: 'Q4' }, { upstream: { fetch: { bytes: 7 } } });

    expect(result).toEqual({ summary: 'Q4: 7 bytes' });
    expect(tester.lastRun.progress).toEqual([{ percent: 50, stage: 'rendering' }]);
    expect(tester.lastRun.logs).toEqual(['rendering Q4 from 7 bytes']);
  });
});

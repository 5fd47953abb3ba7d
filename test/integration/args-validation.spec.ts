import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { InvalidJobHandlerError, JobArgsInvalidError, JobHandler, type StandardSchemaV1 } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

const RenderArgs = z.object({
  reportId: z.string().min(1),
  pages: z.array(z.object({ n: z.number().int().positive() })).default([]),
});

/** A hand-written asynchronous Standard Schema: the spec allows validate() to return a promise. */
const evenAsync: StandardSchemaV1<unknown, { n: number }> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: async (value) =>
      typeof value === 'object' && value !== null && typeof (value as { n?: unknown }).n === 'number' && (value as { n: number }).n % 2 === 0
        ? { value: value as { n: number } }
        : { issues: [{ message: 'n must be an even number', path: [{ key: 'n' }] }] },
  },
};

const seen: unknown[] = [];

@Injectable()
class ValidatedHandlers {
  @JobHandler('v-render', { schema: RenderArgs })
  async render(args: z.infer<typeof RenderArgs>): Promise<number> {
    seen.push(args);
    return args.pages.length;
  }

  @JobHandler('v-even', { schema: evenAsync })
  async even(args: { n: number }): Promise<number> {
    return args.n / 2;
  }

  @JobHandler('v-free')
  async free(): Promise<string> {
    return 'no schema';
  }
}

@Injectable()
class NotASchema {
  @JobHandler('v-bad', { schema: { parse: () => true } as never })
  async bad(): Promise<void> {}
}

describeDialects('args validation (Standard Schema)', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { pollIntervalMs: 20 }, [ValidatedHandlers]);
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  it('rejects invalid args at enqueue with every issue and its path, writing nothing', async () => {
    const err = await app.queue.enqueue({ type: 'v-render', args: { reportId: '', pages: [{ n: 1 }, { n: -2 }] } }).catch((e) => e);
    expect(err).toBeInstanceOf(JobArgsInvalidError);
    expect(err.code).toBe('JOB_ARGS_INVALID');
    expect(err.issues.map((i: { path: string }) => i.path).sort()).toEqual(['args.pages[1].n', 'args.reportId']);
    expect(err.issues.every((i: { type: string }) => i.type === 'v-render')).toBe(true);
    expect(err.message).toMatch(/\(v-render\) args\.pages\[1\]\.n: /);
    expect(await app.count()).toBe(0);
  });

  it('rejects a whole graph when any node is invalid, naming each bad node by ref', async () => {
    const err = await app.queue
      .enqueueGraph([
        { ref: 'ok', type: 'v-render', args: { reportId: 'r1' } },
        { ref: 'free', type: 'v-free', args: { anything: true }, dependsOn: ['ok'] },
        { ref: 'bad-render', type: 'v-render', args: { reportId: 7 }, dependsOn: ['ok'] },
        { ref: 'bad-even', type: 'v-even', args: { n: 3 } },
      ])
      .catch((e) => e);
    expect(err).toBeInstanceOf(JobArgsInvalidError);
    expect(err.issues.map((i: { ref: string; path: string }) => `${i.ref} ${i.path}`)).toEqual(['bad-render args.reportId', 'bad-even args.n']);
    expect(err.issues[1].message).toBe('n must be an even number');
    expect(await app.count()).toBe(0);
  });

  it('runs valid jobs with the schema output (defaults applied), and leaves types without a schema alone', async () => {
    seen.length = 0;
    const ids = await app.queue.enqueueGraph([
      { ref: 'render', type: 'v-render', args: { reportId: 'r1' } },
      { ref: 'even', type: 'v-even', args: { n: 8 } },
      { ref: 'free', type: 'v-free', args: { whatever: [1, 2] } },
    ]);
    expect(await app.queue.waitFor(ids.render, { timeoutMs: 20_000 })).toMatchObject({ state: 'done', result: 0 });
    expect(await app.queue.waitFor(ids.even, { timeoutMs: 20_000 })).toMatchObject({ state: 'done', result: 4 });
    expect(await app.queue.waitFor(ids.free, { timeoutMs: 20_000 })).toMatchObject({ state: 'done', result: 'no schema' });
    expect(seen).toEqual([{ reportId: 'r1', pages: [] }]);
    // What is stored is what the caller passed; the handler got the parsed value.
    expect((await app.queue.get(ids.render))!.args).toEqual({ reportId: 'r1' });
  });

  it('a worker checks args it did not validate itself (enqueued by a process without the handler) and fails the job for good', async () => {
    const producer = await startQueueApp(db, { worker: false, externalTypes: ['v-render'] }, []);
    try {
      const job = await producer.queue.enqueue({ type: 'v-render', args: { reportId: 12 }, maxAttempts: 5 });
      const done = await app.queue.waitFor(job.id, { timeoutMs: 20_000 });
      expect(done).toMatchObject({ state: 'failed', attempts: 1 });
      expect(done.lastError).toMatch(/JobArgsInvalidError: .*\(v-render\) args\.reportId: /);
    } finally {
      await producer.close();
    }
  });

  it('fails bootstrap when the schema option is not a Standard Schema', async () => {
    const boot = startQueueApp(db, {}, [NotASchema]);
    await expect(boot).rejects.toBeInstanceOf(InvalidJobHandlerError);
    await expect(startQueueApp(db, {}, [NotASchema])).rejects.toThrow(/NotASchema\.bad: option "schema" must be a Standard Schema v1/);
  });
});

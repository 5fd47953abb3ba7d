import type { ClaimedJob } from '../../lib/claim/claimed-job';
import { AttemptController } from '../../lib/handlers/attempt-controller';
import { JobCancelledError, JobTimeoutError, UnrecoverableJobError } from '../../lib/handlers/job-abort.errors';
import type { JobContext } from '../../lib/handlers/job-context';
import type { RegisteredJobHandler } from '../../lib/handlers/job-handler.registry';
import { runJob } from '../../lib/handlers/run-job';
import { ResultTooLargeError } from '../../lib/errors';

// runJob is pure orchestration of one attempt (handler, timeout, abort): no database involved.
const job: ClaimedJob = { id: 7, type: 't', args: { n: 1 }, attempts: 2, maxAttempts: 3, group: 'g', priority: 0, parentId: null, timeoutMs: null };
const io = { progress: async () => undefined, upstream: async () => ({}), upstreamFailures: async () => ({}), log: () => undefined, maxLogLines: 1_000 };
const handlerOf = (handle: (args: unknown, ctx: JobContext) => unknown): RegisteredJobHandler => ({
  type: 't',
  options: {},
  name: 'Test.handle',
  handle: handle as RegisteredJobHandler['handle'],
});
const never = () => new Promise<never>(() => undefined);

describe('runJob', () => {
  it('passes args and the attempt to the handler and serializes its result', async () => {
    let seen: JobContext | undefined;
    const outcome = await runJob(
      job,
      handlerOf((args, ctx) => {
        seen = ctx;
        return { echo: args, undef: undefined };
      }),
      new AttemptController(),
      null,
      io,
    );
    expect(outcome).toEqual({ kind: 'done', resultJson: '{"echo":{"n":1}}' });
    expect(seen).toMatchObject({ id: 7, type: 't', attempt: 2, maxAttempts: 3, group: 'g', parentId: null });
  });

  it('stores undefined as null', async () => {
    expect(await runJob(job, handlerOf(async () => undefined), new AttemptController(), null, io)).toEqual({ kind: 'done', resultJson: 'null' });
  });

  it('reports a thrown error, sync or async, and marks UnrecoverableJobError final', async () => {
    const sync = await runJob(job, handlerOf(() => { throw new Error('boom'); }), new AttemptController(), null, io);
    expect(sync).toMatchObject({ kind: 'failed', final: false });
    expect((sync as { error: string }).error).toContain('boom');
    const final = await runJob(job, handlerOf(async () => { throw new UnrecoverableJobError('bad input'); }), new AttemptController(), null, io);
    expect(final).toMatchObject({ kind: 'failed', final: true });
  });

  it('fails the attempt with some text for any rejection value, JSON or not', async () => {
    // A circular object, a BigInt, an object whose toJSON and toString throw: describeError threw
    // inside the rejection handler, the attempt never settled, and the unhandled rejection ended
    // the worker process (Node's default), every job in flight with it.
    const circular: Record<string, unknown> = { code: 'ECIRCLE' };
    circular.self = circular;
    const hostile = { toJSON: () => { throw new Error('no JSON'); }, toString: () => { throw new Error('no text'); } };
    for (const [value, text] of [[circular, '[object Object]'], [10n, '10'], [hostile, '[object Object]'], [Object.create(null), '{}'], [undefined, 'undefined'], ['plain', 'plain']] as const) {
      const outcome = await runJob(job, handlerOf(async () => { throw value; }), new AttemptController(), null, io);
      expect(outcome).toMatchObject({ kind: 'failed', final: false, error: text });
    }
  }, 5_000);

  it('fails a result that is not JSON (a BigInt) instead of storing it', async () => {
    const outcome = await runJob(job, handlerOf(() => ({ big: 1n })), new AttemptController(), null, io);
    expect(outcome).toMatchObject({ kind: 'failed', final: false });
    expect((outcome as { error: string }).error).toContain('cannot be stored as JSON');
  });

  it('fails a result over maxResultBytes for good with ResultTooLargeError, counting UTF-8 bytes', async () => {
    const ok = await runJob(job, handlerOf(() => 'x'.repeat(8)), new AttemptController(), null, io, 10);
    expect(ok).toEqual({ kind: 'done', resultJson: '"xxxxxxxx"' }); // exactly 10 bytes
    const big = await runJob(job, handlerOf(() => 'x'.repeat(9)), new AttemptController(), null, io, 10);
    expect(big).toMatchObject({ kind: 'failed', final: true });
    expect((big as { error: string }).error).toBe(
      `ResultTooLargeError: ${new ResultTooLargeError(11, 10).message}`,
    );
    expect((big as { error: string }).error).toMatch(/serializes to 11 bytes, over the 10-byte limit \(option maxResultBytes\)/);
    // 'é' is one UTF-16 unit but two UTF-8 bytes: "éééé" is 6 characters and 10 bytes.
    const utf8 = await runJob(job, handlerOf(() => 'éééé'), new AttemptController(), null, io, 9);
    expect((utf8 as { error: string }).error).toMatch(/serializes to 10 bytes, over the 9-byte limit/);
  });

  it('times out a hung handler as a failed attempt and aborts its signal', async () => {
    let signal: AbortSignal | undefined;
    const outcome = await runJob(job, handlerOf((_a, ctx) => { signal = ctx.signal; return never(); }), new AttemptController(), 30, io);
    expect(outcome).toMatchObject({ kind: 'failed', final: false });
    expect((outcome as { error: string }).error).toContain(JobTimeoutError.name);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(JobTimeoutError);
  });

  it('resolves at once on abort, whether or not the handler ever read its signal', async () => {
    const quiet = new AttemptController();
    const pending = runJob(job, handlerOf(never), quiet, null, io);
    quiet.abort(new JobCancelledError(7));
    expect(await pending).toEqual({ kind: 'aborted', reason: expect.any(JobCancelledError) });
    // Made after the abort, the signal is already aborted with the first reason.
    quiet.abort(new Error('second reason is ignored'));
    expect(quiet.signal.aborted).toBe(true);
    expect(quiet.signal.reason).toBeInstanceOf(JobCancelledError);

    const listening = new AttemptController();
    const heard: unknown[] = [];
    const run = runJob(job, handlerOf((_a, ctx) => { ctx.signal.addEventListener('abort', () => heard.push(ctx.signal.reason)); return never(); }), listening, null, io);
    listening.abort(new JobCancelledError(7));
    expect(await run).toMatchObject({ kind: 'aborted' });
    expect(heard).toEqual([expect.any(JobCancelledError)]);
  });

  it('treats a handler that rejects after its abort as aborted, not failed', async () => {
    const controller = new AttemptController();
    const outcome = runJob(
      job,
      handlerOf((_a, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted fetch'))))),
      controller,
      null,
      io,
    );
    controller.abort(new JobCancelledError(7));
    expect(await outcome).toMatchObject({ kind: 'aborted' });
  });
});

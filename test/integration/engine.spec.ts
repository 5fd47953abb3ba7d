import { Injectable } from '@nestjs/common';
import { JobContext, JobHandler, UnrecoverableJobError, type JobQueueService } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/** Records what ran, in order, for assertions. */
const log: Array<{ ref: string; upstream?: Record<string, unknown> }> = [];
const failuresLeft = new Map<string, number>();
let upstreamFixed = false;

@Injectable()
class Handlers {
  @JobHandler('step')
  async step(args: { ref: string; ms?: number }, ctx: JobContext): Promise<{ ref: string; attempt: number }> {
    if (args.ms) await new Promise((r) => setTimeout(r, args.ms));
    log.push({ ref: args.ref, upstream: await ctx.upstream() });
    return { ref: args.ref, attempt: ctx.attempt };
  }

  @JobHandler('flaky', { maxAttempts: 5 })
  async flaky(args: { key: string }, ctx: JobContext): Promise<string> {
    const left = failuresLeft.get(args.key) ?? 0;
    if (left > 0) {
      failuresLeft.set(args.key, left - 1);
      throw new Error(`flaky failure, attempt ${ctx.attempt}`);
    }
    return `ok after ${ctx.attempt}`;
  }

  @JobHandler('broken')
  async broken(args: { fatal?: boolean }): Promise<never> {
    if (args?.fatal) throw new UnrecoverableJobError('bad input, do not retry');
    throw new Error('always fails');
  }

  /** Fails until the test "fixes" it. */
  @JobHandler('fixable')
  async fixable(): Promise<string> {
    if (!upstreamFixed) throw new Error('upstream is broken');
    return 'fixed';
  }

  @JobHandler('hang', { timeoutMs: 300 })
  async hang(_args: unknown, ctx: JobContext): Promise<string> {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    return 'never stored';
  }

  @JobHandler('progress')
  async progress(_args: unknown, ctx: JobContext): Promise<string> {
    await ctx.progress(40, 'rendering');
    await new Promise((r) => setTimeout(r, 400));
    return 'rendered';
  }

  @JobHandler('slow')
  async slow(_args: unknown, ctx: JobContext): Promise<string> {
    await new Promise((resolve) => {
      const t = setTimeout(resolve, 20_000);
      ctx.signal.addEventListener('abort', () => (clearTimeout(t), resolve(null)));
    });
    if (ctx.signal.aborted) throw ctx.signal.reason;
    return 'slow done';
  }
}

describeDialects('execution engine', (db) => {
  let app: QueueApp;
  let queue: JobQueueService;

  beforeAll(async () => {
    app = await startQueueApp(
      db,
      { pollIntervalMs: 50, retryBackoff: { baseMs: 20, maxMs: 100 }, heartbeatIntervalMs: 200, leaseTtlMs: 5_000 },
      [Handlers],
    );
    queue = app.queue;
  });
  afterAll(() => app?.close());
  beforeEach(async () => {
    log.length = 0;
    await resetTables(app);
  });

  it('runs a diamond and a fan-out/fan-in in dependency order, with upstream results, and rolls up a container', async () => {
    const ids = await queue.enqueueGraph([
      { ref: 'a', type: 'step', args: { ref: 'a' } },
      { ref: 'b', type: 'step', args: { ref: 'b', ms: 30 }, dependsOn: ['a'] },
      { ref: 'c', type: 'step', args: { ref: 'c' }, dependsOn: ['a'] },
      { ref: 'd', type: 'step', args: { ref: 'd' }, dependsOn: ['b', 'c'] },
      { ref: 'box', type: 'container' },
      ...Array.from({ length: 20 }, (_, i) => ({ ref: `f${i}`, type: 'step', args: { ref: `f${i}` }, parent: 'box', dependsOn: ['d'] })),
      { ref: 'join', type: 'step', args: { ref: 'join' }, dependsOn: Array.from({ length: 20 }, (_, i) => `f${i}`) },
      { ref: 'after', type: 'step', args: { ref: 'after' }, dependsOn: ['box'] },
    ]);
    const after = await queue.waitFor(ids.after, { timeoutMs: 30_000 });
    const join = await queue.waitFor(ids.join, { timeoutMs: 30_000 });
    expect(after.state).toBe('done');
    expect(join.state).toBe('done');
    const order = log.map((l) => l.ref);
    const at = (ref: string) => order.indexOf(ref);
    expect(at('a')).toBe(0);
    expect(at('d')).toBeGreaterThan(Math.max(at('b'), at('c')));
    for (let i = 0; i < 20; i++) {
      expect(at(`f${i}`)).toBeGreaterThan(at('d'));
      expect(at('join')).toBeGreaterThan(at(`f${i}`));
    }
    expect(order).toHaveLength(26);
    expect(log.find((l) => l.ref === 'd')!.upstream).toEqual({ b: { ref: 'b', attempt: 1 }, c: { ref: 'c', attempt: 1 } });
    expect(Object.keys(log.find((l) => l.ref === 'join')!.upstream!)).toHaveLength(20); // each upstream once
    const box = await queue.get(ids.box);
    expect(box).toMatchObject({ state: 'done', isContainer: true, attempts: 0 });
    expect(at('after')).toBeGreaterThan(at('f19'));
    expect((await queue.get(ids.d))?.result).toEqual({ ref: 'd', attempt: 1 });
  });

  it('retries a flaky job with backoff until it succeeds (attempts = 3)', async () => {
    failuresLeft.set('k1', 2);
    const job = await queue.enqueue({ type: 'flaky', args: { key: 'k1' } });
    expect(job.maxAttempts).toBe(5); // from the handler's options
    const done = await queue.waitFor(job.id, { timeoutMs: 20_000 });
    expect(done).toMatchObject({ state: 'done', attempts: 3, result: 'ok after 3' });
    expect(done.lastError).toMatch(/flaky failure, attempt 2/);
  });

  it('fails a job out of attempts, cancels its dependents transitively, and retry() revives them', async () => {
    upstreamFixed = false;
    const ids = await queue.enqueueGraph([
      { ref: 'bad', type: 'fixable', maxAttempts: 2 },
      { ref: 'mid', type: 'step', args: { ref: 'mid' }, dependsOn: ['bad'] },
      { ref: 'box', type: 'container' },
      { ref: 'in', type: 'step', args: { ref: 'in' }, parent: 'box', dependsOn: ['mid'] },
      { ref: 'ok', type: 'step', args: { ref: 'ok' }, parent: 'box' },
    ]);
    const bad = await queue.waitFor(ids.bad, { timeoutMs: 20_000 });
    expect(bad).toMatchObject({ state: 'failed', attempts: 2 });
    expect(bad.lastError).toMatch(/upstream is broken/);
    expect(await queue.waitFor(ids.mid, { timeoutMs: 5_000 })).toMatchObject({ state: 'cancelled' });
    expect((await queue.get(ids.mid))!.lastError).toMatch(new RegExp(`upstream job ${ids.bad} failed`));
    expect((await queue.get(ids.in))!.state).toBe('cancelled');
    expect((await queue.waitFor(ids.box, { timeoutMs: 10_000 })).state).toBe('failed');
    await expect(queue.retry(ids.ok)).rejects.toThrow(/only failed or cancelled jobs can be retried/);

    // The upstream gets fixed: retry brings back the job, its dependents and the container.
    upstreamFixed = true;
    const revived = await queue.retry(ids.bad);
    expect(revived).toMatchObject({ state: 'ready', attempts: 0, lastError: null }); // as the retry left it
    expect(await queue.waitFor(ids.box, { timeoutMs: 20_000 })).toMatchObject({ state: 'done' });
    for (const ref of ['bad', 'mid', 'in', 'ok'] as const) expect((await queue.get(ids[ref]))!.state).toBe('done');
    expect((await queue.get(ids.bad))!.result).toBe('fixed');
  });

  it('retry() of a job that still fails closes everything again, consistently', async () => {
    upstreamFixed = false;
    const ids = await queue.enqueueGraph([
      { ref: 'bad', type: 'fixable', maxAttempts: 1 },
      { ref: 'box', type: 'container' },
      { ref: 'in', type: 'step', args: { ref: 'in' }, parent: 'box', dependsOn: ['bad'] },
    ]);
    expect((await queue.waitFor(ids.box, { timeoutMs: 10_000 })).state).toBe('failed');
    await queue.retry(ids.bad);
    expect((await queue.waitFor(ids.bad, { timeoutMs: 10_000 })).state).toBe('failed');
    expect((await queue.waitFor(ids.box, { timeoutMs: 10_000 })).state).toBe('failed');
    expect((await queue.get(ids.in))!.state).toBe('cancelled');
  });

  it('retry() of one of two failed upstreams cancels their join again; retry() of the other runs it', async () => {
    upstreamFixed = false;
    const ids = await queue.enqueueGraph([
      { ref: 'bad1', type: 'fixable', maxAttempts: 1 },
      { ref: 'bad2', type: 'fixable', maxAttempts: 1 },
      { ref: 'join', type: 'step', args: { ref: 'join' }, dependsOn: ['bad1', 'bad2'] },
      { ref: 'after', type: 'step', args: { ref: 'after' }, dependsOn: ['join'] },
    ]);
    for (const ref of ['bad1', 'bad2'] as const) expect((await queue.waitFor(ids[ref], { timeoutMs: 10_000 })).state).toBe('failed');
    expect((await queue.waitFor(ids.after, { timeoutMs: 10_000 })).state).toBe('cancelled');

    upstreamFixed = true;
    await queue.retry(ids.bad1);
    // Within the retry's transaction: join still depends on bad2, so it and after are closed again.
    expect(await queue.get(ids.join)).toMatchObject({ state: 'cancelled', lastError: 'cancelled: still depends on a failed or cancelled job' });
    expect((await queue.get(ids.after))!.state).toBe('cancelled');
    expect((await queue.waitFor(ids.bad1, { timeoutMs: 10_000 })).state).toBe('done');

    await queue.retry(ids.bad2);
    expect((await queue.waitFor(ids.after, { timeoutMs: 10_000 })).state).toBe('done');
    for (const ref of ['bad1', 'bad2', 'join'] as const) expect((await queue.get(ids[ref]))!.state).toBe('done');
  });

  it('fails at once on an UnrecoverableJobError', async () => {
    const job = await queue.enqueue({ type: 'broken', args: { fatal: true }, maxAttempts: 5 });
    expect(await queue.waitFor(job.id, { timeoutMs: 10_000 })).toMatchObject({ state: 'failed', attempts: 1 });
  });

  it('times out a hung handler and counts the attempt', async () => {
    const job = await queue.enqueue({ type: 'hang', maxAttempts: 2 });
    expect(job.timeoutMs).toBe(300);
    const failed = await queue.waitFor(job.id, { timeoutMs: 20_000 });
    expect(failed).toMatchObject({ state: 'failed', attempts: 2, result: null });
    expect(failed.lastError).toMatch(/timed out after 300 ms/);
  });

  it('persists progress and reports stats', async () => {
    const job = await queue.enqueue({ type: 'progress', group: 'tenant-x' });
    await until(async () => (await queue.get(job.id))?.progress === 40);
    expect(await queue.get(job.id)).toMatchObject({ state: 'running', progress: 40, currentStage: 'rendering' });
    const stats = await queue.stats();
    expect(stats.byState.running).toBe(1);
    expect(stats.groups).toEqual([{ group: 'tenant-x', ready: 0, running: 1 }]);
    expect(await queue.waitFor(job.id, { timeoutMs: 10_000 })).toMatchObject({ state: 'done', progress: 100, result: 'rendered' });
    const after = await queue.stats();
    expect(after.recent.done).toBe(1);
    expect(after.recent.meanDurationMs).toBeGreaterThanOrEqual(300);
  });

  it('cancels a running job: its signal aborts and the result is not stored', async () => {
    const job = await queue.enqueue({ type: 'slow' });
    await until(async () => (await queue.get(job.id))?.state === 'running');
    const cancelled = await queue.cancel(job.id);
    expect(cancelled.state).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 300));
    expect(await queue.get(job.id)).toMatchObject({ state: 'cancelled', result: null });
    expect((await queue.stats()).byState.running).toBe(0);
  });

  it('cancels a container with its subtree and cancels dependents', async () => {
    const ids = await queue.enqueueGraph([
      { ref: 'gate', type: 'slow' },
      { ref: 'box', type: 'container' },
      { ref: 'x', type: 'step', args: { ref: 'x' }, parent: 'box', dependsOn: ['gate'] },
      { ref: 'y', type: 'step', args: { ref: 'y' }, parent: 'box', dependsOn: ['gate'] },
      { ref: 'next', type: 'step', args: { ref: 'next' }, dependsOn: ['box'] },
    ]);
    await queue.cancel(ids.box);
    for (const ref of ['box', 'x', 'y', 'next'] as const) expect((await queue.get(ids[ref]))!.state).toBe('cancelled');
    expect((await queue.get(ids.gate))!.state).not.toBe('cancelled');
    await queue.cancel(ids.gate);
  });

  it('waitFor rejects with a typed timeout, and unknown ids are typed errors', async () => {
    const job = await queue.enqueue({ type: 'slow' });
    await expect(queue.waitFor(job.id, { timeoutMs: 50 })).rejects.toThrow(/did not finish within 50 ms/);
    await expect(queue.waitFor(987_654)).rejects.toThrow(/Job 987654 does not exist/);
    await expect(queue.cancel(987_654)).rejects.toThrow(/does not exist/);
    await queue.cancel(job.id);
  });
});

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

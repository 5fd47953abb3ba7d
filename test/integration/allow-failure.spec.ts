import { Injectable } from '@nestjs/common';
import { FailedUpstreamJobError, JobContext, JobHandler, type UpstreamFailure } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

interface WorkArgs {
  name: string;
  fail?: boolean;
  /** Waits until the test opens the gate of this name. */
  gate?: string;
}

@Injectable()
class Jobs {
  /** Per run, by job name (ids repeat across dialects' databases): what the handler saw. */
  readonly runs = new Map<string, Array<{ upstream: Record<string, unknown>; failures: Record<string, UpstreamFailure> }>>();
  readonly open = new Set<string>();

  @JobHandler('af.work', { maxAttempts: 1 })
  async work(args: WorkArgs, ctx: JobContext): Promise<string> {
    if (args.gate) await eventually(`gate ${args.gate}`, async () => this.open.has(args.gate!), 60_000);
    const list = this.runs.get(args.name) ?? [];
    list.push({ upstream: await ctx.upstream(), failures: await ctx.upstreamFailures() });
    this.runs.set(args.name, list);
    if (args.fail) throw new Error(`${args.name} broke`);
    return args.name;
  }
}

const work = (name: string, extra: Omit<WorkArgs, 'name'> = {}) => ({ type: 'af.work', args: { name, ...extra } });

/** `dependsOn: [{ job, allowFailure: true }]`: a dependent that runs however its upstream ended. */
describeDialects('dependencies that allow failure', (db) => {
  let app: QueueApp;
  let jobs: Jobs;

  beforeAll(async () => {
    app = await startQueueApp(db, { pollIntervalMs: 50 }, [Jobs]);
    jobs = app.module.get(Jobs);
  });
  afterAll(() => app?.close());
  beforeEach(async () => {
    await resetTables(app);
    jobs.runs.clear();
    jobs.open.clear();
  });

  const state = async (id: number) => (await app.queue.get(id))!.state;
  const pending = async (id: number) => Number((await app.rows(`SELECT pending_deps FROM jobs WHERE id = ${id}`))[0].pending_deps);

  it('runs a cleanup after a failed upstream, with the failure to read, while a strict sibling is cancelled', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'fetch', ...work('fetch', { fail: true }) },
      { ref: 'render', ...work('render'), dependsOn: ['fetch'] },
      { ref: 'cleanup', ...work('cleanup'), dependsOn: [{ job: 'fetch', allowFailure: true }] },
    ]);
    expect(await app.queue.waitFor(ids.cleanup, { timeoutMs: 30_000 })).toMatchObject({ state: 'done', result: 'cleanup' });
    expect(await state(ids.fetch)).toBe('failed');
    expect(await state(ids.render)).toBe('cancelled');
    expect(jobs.runs.has('render')).toBe(false);
    const [run] = jobs.runs.get('cleanup')!;
    expect(run.upstream).toEqual({ fetch: null });
    expect(run.failures).toEqual({ fetch: { id: ids.fetch, state: 'failed', error: expect.stringContaining('fetch broke') } });
    const graph = await app.queue.getGraph(ids.fetch);
    expect(graph.edges).toEqual([
      { from: ids.fetch, to: ids.render },
      { from: ids.fetch, to: ids.cleanup, allowFailure: true },
    ].sort((a, b) => a.to - b.to));
  });

  it('runs it after a success too, with no failures to read', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'fetch', ...work('fetch') },
      { ref: 'cleanup', ...work('cleanup'), dependsOn: [{ job: 'fetch', allowFailure: true }] },
    ]);
    expect(await app.queue.waitFor(ids.cleanup, { timeoutMs: 30_000 })).toMatchObject({ state: 'done' });
    expect(jobs.runs.get('cleanup')).toEqual([{ upstream: { fetch: 'fetch' }, failures: {} }]);
  });

  it('still cancels a job when a strict upstream fails, whatever its lenient ones do', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'ok', ...work('ok') },
      { ref: 'bad', ...work('bad', { fail: true, gate: 'bad' }) },
      { ref: 'both', ...work('both'), dependsOn: [{ job: 'ok', allowFailure: true }, 'bad'] },
    ]);
    await eventually('ok done', async () => (await state(ids.ok)) === 'done');
    expect(await state(ids.both)).toBe('waiting');
    jobs.open.add('bad');
    await eventually('both cancelled', async () => (await state(ids.both)) === 'cancelled');
    expect((await app.queue.get(ids.both))!.lastError).toContain(`upstream job ${ids.bad}`);
    expect(jobs.runs.has('both')).toBe(false);
  });

  it('waits for every upstream: a lenient one failing first does not start the job before a strict one is done', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'bad', ...work('bad', { fail: true }) },
      { ref: 'slow', ...work('slow', { gate: 'slow' }) },
      { ref: 'after', ...work('after'), dependsOn: [{ job: 'bad', allowFailure: true }, 'slow'] },
    ]);
    await eventually('bad failed', async () => (await state(ids.bad)) === 'failed');
    await eventually('counted down once', async () => (await pending(ids.after)) === 1);
    expect(await state(ids.after)).toBe('waiting');
    jobs.open.add('slow');
    expect(await app.queue.waitFor(ids.after, { timeoutMs: 30_000 })).toMatchObject({ state: 'done' });
    expect(jobs.runs.get('after')![0].failures).toEqual({ bad: expect.objectContaining({ state: 'failed' }) });
  });

  it('follows the cascade: a job cancelled by its failed upstream lets its own lenient dependents run', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'a', ...work('a', { fail: true }) },
      { ref: 'b', ...work('b'), dependsOn: ['a'] },
      { ref: 'report', ...work('report'), dependsOn: [{ job: 'b', allowFailure: true }] },
    ]);
    expect(await app.queue.waitFor(ids.report, { timeoutMs: 30_000 })).toMatchObject({ state: 'done' });
    expect(await state(ids.b)).toBe('cancelled');
    expect(jobs.runs.get('report')![0].failures).toEqual({
      b: { id: ids.b, state: 'cancelled', error: `cancelled: upstream job ${ids.a} failed or was cancelled` },
    });
  });

  it('runs the dependents of a job the user cancels when they allow it', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'held', ...work('held'), runAfter: new Date(Date.now() + 3_600_000) },
      { ref: 'strict', ...work('strict'), dependsOn: ['held'] },
      { ref: 'lenient', ...work('lenient'), dependsOn: [{ job: 'held', allowFailure: true }] },
    ]);
    await app.queue.cancel(ids.held);
    expect(await app.queue.waitFor(ids.lenient, { timeoutMs: 30_000 })).toMatchObject({ state: 'done' });
    expect(await state(ids.strict)).toBe('cancelled');
    expect(jobs.runs.has('held')).toBe(false);
  });

  it('hands a container\'s lenient dependency down to its children, and a strict mention wins', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'a', ...work('a', { fail: true }) },
      { ref: 'box', type: 'box', dependsOn: [{ job: 'a', allowFailure: true }] },
      { ref: 'c1', ...work('c1'), parent: 'box' },
      { ref: 'c2', ...work('c2'), parent: 'box', dependsOn: ['a'] },
    ]);
    expect(await app.queue.waitFor(ids.c1, { timeoutMs: 30_000 })).toMatchObject({ state: 'done' });
    expect(await state(ids.c2)).toBe('cancelled');
    expect(await app.queue.waitFor(ids.box, { timeoutMs: 30_000 })).toMatchObject({ state: 'failed' });
    const edges = await app.rows(`SELECT job_id, depends_on_id, allow_failure FROM job_deps ORDER BY job_id, depends_on_id`);
    expect(edges.map((e) => [Number(e.job_id), Number(e.depends_on_id), Number(e.allow_failure)])).toEqual([
      [ids.box, ids.a, 1],
      [ids.c1, ids.a, 1],
      [ids.c2, ids.a, 0],
    ]);
  });

  it('takes a failed or cancelled existing job as a lenient upstream (ready at once), and refuses it as a strict one', async () => {
    const { bad } = await app.queue.enqueueGraph([{ ref: 'bad', ...work('bad', { fail: true }) }]);
    expect(await app.queue.waitFor(bad, { timeoutMs: 30_000 })).toMatchObject({ state: 'failed' });
    const before = await app.count();
    await expect(app.queue.enqueueGraph([{ ref: 'x', ...work('x'), dependsOn: [bad] }])).rejects.toBeInstanceOf(FailedUpstreamJobError);
    // Named both ways, the strict mention wins.
    await expect(
      app.queue.enqueueGraph([{ ref: 'x', ...work('x'), dependsOn: [bad, { job: bad, allowFailure: true }] }]),
    ).rejects.toBeInstanceOf(FailedUpstreamJobError);
    expect(await app.count()).toBe(before);
    const { after } = await app.queue.enqueueGraph([{ ref: 'after', ...work('after'), dependsOn: [{ job: bad, allowFailure: true }] }]);
    expect(await pending(after)).toBe(0);
    expect(await app.queue.waitFor(after, { timeoutMs: 30_000 })).toMatchObject({ state: 'done' });
    // Keyed by the upstream's ref in its own graph, as ctx.upstream() keys it.
    expect(jobs.runs.get('after')![0].failures).toEqual({ bad: expect.objectContaining({ id: bad, state: 'failed' }) });
  });

  it('makes a waiting lenient dependent wait again when its failed upstream is retried, and leaves one that ran alone', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'flaky', ...work('flaky', { fail: true }) },
      { ref: 'slow', ...work('slow', { gate: 'slow' }) },
      { ref: 'waits', ...work('waits'), dependsOn: [{ job: 'flaky', allowFailure: true }, 'slow'] },
      { ref: 'ran', ...work('ran'), dependsOn: [{ job: 'flaky', allowFailure: true }] },
    ]);
    expect(await app.queue.waitFor(ids.ran, { timeoutMs: 30_000 })).toMatchObject({ state: 'done' });
    expect(await pending(ids.waits)).toBe(1);
    // Hold the retried job back so the test sees the dependent waiting for it again.
    await app.rows(`UPDATE jobs SET args = '{"name":"flaky","fail":true,"gate":"flaky"}' WHERE id = ${ids.flaky}`);
    await app.queue.retry(ids.flaky);
    expect(await pending(ids.waits)).toBe(2);
    expect(await state(ids.waits)).toBe('waiting');
    jobs.open.add('slow');
    await eventually('slow done', async () => (await state(ids.slow)) === 'done');
    expect(await pending(ids.waits)).toBe(1);
    expect(await state(ids.waits)).toBe('waiting');
    jobs.open.add('flaky');
    await eventually('flaky failed again', async () => (await state(ids.flaky)) === 'failed');
    expect(await app.queue.waitFor(ids.waits, { timeoutMs: 30_000 })).toMatchObject({ state: 'done' });
    // `ran` ran once, after the first failure; the retry did not run it again.
    expect(jobs.runs.get('ran')).toHaveLength(1);
    expect(jobs.runs.get('waits')).toHaveLength(1);
    expect(jobs.runs.get('flaky')).toHaveLength(2);
  });

  it('reopens a job cancelled by a strict upstream without waiting for a failed lenient one again', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'lenientBad', ...work('lenientBad', { fail: true }) },
      { ref: 'strictBad', ...work('strictBad', { fail: true, gate: 'strict' }) },
      { ref: 'd', ...work('d'), dependsOn: [{ job: 'lenientBad', allowFailure: true }, 'strictBad'] },
    ]);
    await eventually('lenientBad failed', async () => (await state(ids.lenientBad)) === 'failed');
    jobs.open.add('strict');
    await eventually('d cancelled', async () => (await state(ids.d)) === 'cancelled');
    // Retried, strictBad now succeeds; d waits for it only, lenientBad stays failed.
    await app.rows(`UPDATE jobs SET args = '{"name":"strictBad"}' WHERE id = ${ids.strictBad}`);
    await app.queue.retry(ids.strictBad);
    expect(await state(ids.lenientBad)).toBe('failed');
    expect(await app.queue.waitFor(ids.d, { timeoutMs: 30_000 })).toMatchObject({ state: 'done' });
    expect(jobs.runs.get('d')![0].failures).toEqual({ lenientBad: expect.objectContaining({ state: 'failed' }) });
  });

  it('retryMany of a strict upstream and a lenient one together reopens the dependent to wait for both', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'l', ...work('l', { fail: true }) },
      { ref: 's', ...work('s', { fail: true, gate: 's' }) },
      { ref: 'd', ...work('d'), dependsOn: [{ job: 'l', allowFailure: true }, 's'] },
    ]);
    await eventually('l failed', async () => (await state(ids.l)) === 'failed');
    jobs.open.add('s');
    await eventually('d cancelled', async () => (await state(ids.d)) === 'cancelled');
    // Held back again after the retry, so the test sees what it reopened.
    await app.rows(`UPDATE jobs SET args = '{"name":"l","fail":true,"gate":"again"}' WHERE id = ${ids.l}`);
    await app.rows(`UPDATE jobs SET args = '{"name":"s","fail":true,"gate":"again"}' WHERE id = ${ids.s}`);
    const { count } = await app.queue.retryMany({ type: 'af.work', state: 'failed' });
    expect(count).toBe(2);
    // Both reopened upstreams are open again: d waits for the two of them.
    expect(await pending(ids.d)).toBe(2);
    expect(await state(ids.d)).toBe('waiting');
    jobs.open.add('again');
    expect(await app.queue.waitFor(ids.d, { timeoutMs: 30_000 })).toMatchObject({ state: 'cancelled' });
    expect(jobs.runs.has('d')).toBe(false);
  });
});

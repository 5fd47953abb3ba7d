import { Injectable } from '@nestjs/common';
import { JobContext, JobHandler, OnJobEvent, SnoozeJobError, type JobEventDetail, type JobView } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

const HOUR = 3_600_000;

@Injectable()
class SnoozingJobs {
  /** Run start times per job (this process's clock), in order. */
  readonly runs = new Map<number, Array<{ at: number; attempt: number }>>();
  /** Lets a test release a job that waits in its handler. */
  readonly gates = new Map<number, () => void>();

  private run(ctx: JobContext): number {
    const list = this.runs.get(ctx.id) ?? [];
    list.push({ at: Date.now(), attempt: ctx.attempt });
    this.runs.set(ctx.id, list);
    return list.length;
  }

  /** Snoozes `times` times for `ms`, then returns how many runs it took. */
  @JobHandler('snooze.poll', { maxAttempts: 1 })
  async poll(args: { times: number; ms: number }, ctx: JobContext): Promise<{ runs: number }> {
    const run = this.run(ctx);
    ctx.log(`run ${run}`);
    if (run <= args.times) ctx.snooze(args.ms);
    return { runs: run };
  }

  /** Snoozes once (thrown from deep inside, as a service would), then fails every attempt. */
  @JobHandler('snooze.then-fail', { maxAttempts: 2 })
  async thenFail(_args: unknown, ctx: JobContext): Promise<never> {
    if (this.run(ctx) === 1) throw new SnoozeJobError(10);
    throw new Error(`attempt ${ctx.attempt} fails`);
  }

  /** Snoozes with whatever delay it is given: a bad one is the handler's bug and fails the attempt. */
  @JobHandler('snooze.bad', { maxAttempts: 1 })
  async bad(args: { delay: unknown }, ctx: JobContext): Promise<never> {
    this.run(ctx);
    ctx.snooze(args.delay as number);
  }

  /** Waits for the test's gate, then snoozes for a minute. */
  @JobHandler('snooze.gated', { maxAttempts: 3 })
  async gated(_args: unknown, ctx: JobContext): Promise<never> {
    this.run(ctx);
    await new Promise<void>((resolve) => this.gates.set(ctx.id, resolve));
    ctx.snooze(60_000);
  }

  /** A catch-all `catch` that rethrows what it does not handle lets the snooze through. */
  @JobHandler('snooze.caught', { maxAttempts: 1 })
  async caught(_args: unknown, ctx: JobContext): Promise<string> {
    if (this.run(ctx) > 1) return 'second run';
    try {
      ctx.snooze(0);
    } catch (err) {
      if (err instanceof SnoozeJobError) throw err;
    }
    return 'not snoozed';
  }

  readonly events: Array<{ id: number; event: string; attempt?: number; delayMs?: number; snoozes: number; state: string }> = [];

  @OnJobEvent('started')
  @OnJobEvent('snoozed')
  @OnJobEvent('completed')
  @OnJobEvent('retrying')
  @OnJobEvent('failed')
  onEvent(job: JobView, detail: JobEventDetail): void {
    this.events.push({ id: job.id, event: detail.event, attempt: detail.attempt, delayMs: detail.delayMs, snoozes: job.snoozes, state: job.state });
  }
}

/** `ctx.snooze(ms)` / `SnoozeJobError`: the job runs again later without spending an attempt. */
describeDialects('snooze', (db) => {
  let app: QueueApp;
  let jobs: SnoozingJobs;

  beforeAll(async () => {
    app = await startQueueApp(db, { pollIntervalMs: 50, retryBackoff: { baseMs: 10, maxMs: 20 } }, [SnoozingJobs]);
    jobs = app.module.get(SnoozingJobs);
  });
  afterAll(() => app?.close());
  beforeEach(async () => {
    await resetTables(app);
    jobs.events.length = 0;
  });

  it('runs again after each delay, on attempt 1 of 1 every time; counts the snoozes; reports each as an event', async () => {
    const MS = 300;
    const job = await app.queue.enqueue({ type: 'snooze.poll', args: { times: 3, ms: MS } });
    const done = await app.queue.waitFor(job.id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ state: 'done', attempts: 1, maxAttempts: 1, snoozes: 3, result: { runs: 4 }, lastError: null });
    const runs = jobs.runs.get(job.id)!;
    expect(runs.map((r) => r.attempt)).toEqual([1, 1, 1, 1]);
    // Each run starts no earlier than its snooze allows (the database's clock decides; a few ms of skew allowed).
    for (let i = 1; i < runs.length; i++) expect(runs[i].at - runs[i - 1].at).toBeGreaterThanOrEqual(MS - 20);
    expect((await app.queue.getLogs(job.id)).logs.map((l) => [l.attempt, l.message])).toEqual([[1, 'run 1'], [1, 'run 2'], [1, 'run 3'], [1, 'run 4']]);
    await eventually('the events delivered', async () => jobs.events.some((e) => e.id === job.id && e.event === 'completed'));
    expect(jobs.events.filter((e) => e.id === job.id).map((e) => [e.event, e.attempt, e.delayMs])).toEqual([
      ['started', 1, undefined], ['snoozed', 1, MS],
      ['started', 1, undefined], ['snoozed', 1, MS],
      ['started', 1, undefined], ['snoozed', 1, MS],
      ['started', 1, undefined], ['completed', 1, undefined],
    ]);
    // The snoozed event's view is the job as written: ready again, the count up.
    expect(jobs.events.filter((e) => e.id === job.id && e.event === 'snoozed').map((e) => [e.state, e.snoozes])).toEqual([['ready', 1], ['ready', 2], ['ready', 3]]);
    expect(jobs.events.find((e) => e.id === job.id && e.event === 'completed')).toMatchObject({ state: 'done', snoozes: 3 });
  });

  it('keeps the attempt budget: a job of 2 attempts that snoozed once still fails only after 2 failed attempts', async () => {
    const job = await app.queue.enqueue({ type: 'snooze.then-fail', args: {} });
    const failed = await app.queue.waitFor(job.id, { timeoutMs: 30_000 });
    expect(failed).toMatchObject({ state: 'failed', attempts: 2, snoozes: 1 });
    expect(failed.lastError).toContain('attempt 2 fails');
    expect(jobs.runs.get(job.id)!.map((r) => r.attempt)).toEqual([1, 1, 2]);
  });

  it('leaves dependents waiting until the snoozed job is done, then runs them', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'up', type: 'snooze.poll', args: { times: 2, ms: 200 } },
      { ref: 'down', type: 'snooze.poll', args: { times: 0, ms: 0 }, dependsOn: ['up'] },
    ]);
    await eventually('up snoozed once', async () => (await app.queue.get(ids.up))!.snoozes >= 1);
    expect((await app.queue.get(ids.down))!.state).toBe('waiting');
    expect(await app.queue.waitFor(ids.down, { timeoutMs: 30_000 })).toMatchObject({ state: 'done', snoozes: 0 });
    expect((await app.queue.get(ids.up))!).toMatchObject({ state: 'done', snoozes: 2 });
    expect(jobs.runs.get(ids.down)![0].at).toBeGreaterThanOrEqual(jobs.runs.get(ids.up)![2].at);
  });

  it('is found by find(), can be run now, and shows its runAfter while it sleeps', async () => {
    const job = await app.queue.enqueue({ type: 'snooze.poll', args: { times: 1, ms: HOUR } });
    await eventually('snoozed', async () => (await app.queue.get(job.id))!.snoozes === 1);
    const asleep = (await app.queue.get(job.id))!;
    expect(asleep).toMatchObject({ state: 'ready', attempts: 0, snoozes: 1 });
    expect(asleep.runAfter.getTime()).toBeGreaterThan(Date.now() + HOUR - 60_000);
    expect((await app.queue.find({ state: 'ready', type: 'snooze.poll' })).jobs.map((j) => j.id)).toEqual([job.id]);
    await app.queue.runNow(job.id);
    expect(await app.queue.waitFor(job.id, { timeoutMs: 30_000 })).toMatchObject({ state: 'done', attempts: 1, snoozes: 1, result: { runs: 2 } });
  });

  it('a delay that is not 0 to 365 days fails the attempt with InvalidJobError, as any handler bug', async () => {
    const bad = [-1, Number.NaN, Number.POSITIVE_INFINITY, '5', null, 366 * 24 * HOUR];
    const ids = await app.queue.enqueueGraph(bad.map((delay, i) => ({ ref: `b${i}`, type: 'snooze.bad', args: { delay } })));
    for (const id of Object.values(ids)) {
      const view = await app.queue.waitFor(id, { timeoutMs: 30_000 });
      expect(view).toMatchObject({ state: 'failed', attempts: 1, snoozes: 0 });
      expect(view.lastError).toContain('InvalidJobError');
      expect(view.lastError).toContain('"snooze delayMs" must be a number of milliseconds from 0 to 31536000000 (365 days)');
    }
    expect(() => new SnoozeJobError(-5)).toThrow('"snooze delayMs"');
    expect(new SnoozeJobError(1.2).delayMs).toBe(2);
  });

  it('snoozes through a catch that rethrows it, and a snooze of 0 runs again at once', async () => {
    const job = await app.queue.enqueue({ type: 'snooze.caught', args: {} });
    expect(await app.queue.waitFor(job.id, { timeoutMs: 30_000 })).toMatchObject({ state: 'done', snoozes: 1, result: 'second run' });
    const runs = jobs.runs.get(job.id)!;
    expect(runs[1].at - runs[0].at).toBeLessThan(5_000);
  });

  it('a snooze from an attempt whose lease went to another worker changes nothing', async () => {
    const job = await app.queue.enqueue({ type: 'snooze.gated', args: {} });
    await eventually('running, waiting at its gate', async () => jobs.gates.has(job.id));
    // Another worker took the job over (as after a lease expiry); the attempt here does not know yet.
    await app.rows(`UPDATE jobs SET lease_owner = 'another-worker' WHERE id = ${job.id}`);
    const before = await app.rows(`SELECT state, attempts, snoozes, run_after, lease_owner FROM jobs WHERE id = ${job.id}`);
    jobs.gates.get(job.id)!();
    await new Promise((r) => setTimeout(r, 500));
    expect(await app.rows(`SELECT state, attempts, snoozes, run_after, lease_owner FROM jobs WHERE id = ${job.id}`)).toEqual(before);
    expect(jobs.events.filter((e) => e.id === job.id && e.event === 'snoozed')).toEqual([]);
    await app.queue.cancel(job.id);
  });
});

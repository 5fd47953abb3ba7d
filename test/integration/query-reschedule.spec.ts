import { Injectable } from '@nestjs/common';
import { InvalidJobError, InvalidJobStateError, InvalidQueryError, JobHandler, JobNotFoundError, type JobContext } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

const HOUR = 3_600_000;
const MANY = 2_000;
let release: () => void = () => undefined;

@Injectable()
class Recorded {
  readonly order: string[] = [];

  @JobHandler('rs-order')
  async order_(args: { name: string }): Promise<void> {
    this.order.push(args.name);
  }

  @JobHandler('rs-gate')
  async gate(): Promise<void> {
    await new Promise<void>((r) => (release = r));
  }

  @JobHandler('rs-many')
  async many(_args: unknown, ctx: JobContext): Promise<number> {
    return ctx.attempt;
  }
}

/** `reschedule(id, { runAfter?, priority? })` / `rescheduleMany(filter, …)`: what the claim does next. */
describeDialects('reschedule / rescheduleMany', (db) => {
  let app: QueueApp;
  const boot = async (concurrency: number) => (app = await startQueueApp(db, { pollIntervalMs: 100, concurrency }, [Recorded]));
  afterEach(async () => {
    release();
    await resetTables(app);
    await app.close();
  });

  it('a raised priority is claimed first, a later start is not claimed until then, an earlier one at once', async () => {
    await boot(1);
    const rec = app.module.get(Recorded);
    rec.order.length = 0;
    await app.queue.pause({ type: 'rs-order' });
    const jobs: Record<string, number> = {};
    for (const name of ['a', 'b', 'c', 'd']) jobs[name] = (await app.queue.enqueue({ type: 'rs-order', args: { name } })).id;
    const urgent = await app.queue.reschedule(jobs.d, { priority: 10 });
    expect(urgent).toMatchObject({ state: 'ready', priority: 10 });
    const later = new Date(Date.now() + HOUR);
    expect(Math.abs((await app.queue.reschedule(jobs.c, { runAfter: later })).runAfter.getTime() - later.getTime())).toBeLessThan(1_000);
    await app.queue.resume({ type: 'rs-order' });
    await eventually('a, b and d done', async () => rec.order.length === 3, 30_000, 50);
    expect(rec.order).toEqual(['d', 'a', 'b']);
    // c waits for its hour: nothing claims it meanwhile.
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await app.queue.get(jobs.c))!.state).toBe('ready');
    // Brought back: a time in the past means now.
    await app.queue.reschedule(jobs.c, { runAfter: new Date(Date.now() - HOUR), priority: 0 });
    expect((await app.queue.waitFor(jobs.c, { timeoutMs: 30_000 })).state).toBe('done');
    expect(rec.order).toEqual(['d', 'a', 'b', 'c']);
  });

  it('a waiting job keeps its new start after its upstream; claimed, finished, unknown ids and bad input are refused, changing nothing', async () => {
    await boot(2);
    // Paused until the reschedule: otherwise `up` can run and `down` be promoted and claimed first.
    await app.queue.pause({ type: 'rs-order' });
    const ids = await app.queue.enqueueGraph([
      { ref: 'up', type: 'rs-order', args: { name: 'up' } },
      { ref: 'down', type: 'rs-order', args: { name: 'down' }, dependsOn: ['up'] },
      { ref: 'gate', type: 'rs-gate' },
    ]);
    const down = await app.queue.reschedule(ids.down, { runAfter: new Date(Date.now() + HOUR) });
    expect(down.state).toBe('waiting');
    await app.queue.resume({ type: 'rs-order' });
    expect((await app.queue.waitFor(ids.up, { timeoutMs: 30_000 })).state).toBe('done');
    await eventually('down promoted', async () => (await app.queue.get(ids.down))!.state === 'ready', 30_000, 50);
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await app.queue.get(ids.down))!.state).toBe('ready');

    await eventually('the gate running', async () => (await app.queue.get(ids.gate))!.state === 'running', 30_000, 50);
    const snapshot = () => app.rows(`SELECT id, state, priority, run_after, updated_at FROM jobs ORDER BY id`);
    const before = await snapshot();
    for (const id of [ids.up, ids.gate]) {
      const err = await app.queue.reschedule(id, { priority: 3 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidJobStateError);
      expect((err as Error).message).toMatch(/reschedule/);
    }
    await expect(app.queue.reschedule(ids.gate + 1_000, { priority: 3 })).rejects.toThrow(JobNotFoundError);
    for (const bad of [0, -3, 2.5, '7', undefined]) await expect(app.queue.reschedule(bad as never, { priority: 3 })).rejects.toThrow(InvalidJobError);
    for (const input of [{}, { priority: -1 }, { runAfter: 'tomorrow' }, { runAfter: new Date(NaN) }, { priority: 1, group: 'x' }, null]) {
      await expect(app.queue.reschedule(ids.down, input as never)).rejects.toThrow(InvalidJobError);
      await expect(app.queue.rescheduleMany({ type: 'rs-order' }, input as never)).rejects.toThrow(InvalidJobError);
    }
    expect(await snapshot()).toEqual(before);
  });

  it(`rescheduleMany of ${MANY.toLocaleString('en')} jobs while a worker runs them: each still runs once, those changed before their claim are counted`, async () => {
    await boot(10);
    await expect(app.queue.rescheduleMany({}, { priority: 1 })).rejects.toThrow(InvalidQueryError);
    await app.queue.enqueueGraph(Array.from({ length: MANY }, (_, i) => ({ ref: `m${i}`, type: 'rs-many', group: 'rs-many' })));
    // Batches of 500 jobs, each its own transaction, walked newest first while the worker claims
    // oldest first, then (priority 7) right behind the walk's front: they race on the same rows.
    await eventually('the worker under way', async () => (await app.count(`group_key = 'rs-many' AND state = 'done'`)) >= 200, 60_000, 10);
    const { count } = await app.queue.rescheduleMany({ group: 'rs-many' }, { priority: 7 });
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThan(MANY);
    await eventually('all done', async () => (await app.count(`group_key = 'rs-many' AND state = 'done'`)) === MANY, 120_000, 100);
    expect(await app.count(`group_key = 'rs-many' AND priority = 7`)).toBe(count);
    expect(await app.count(`group_key = 'rs-many' AND attempts <> 1`)).toBe(0);
    expect(await app.queue.rescheduleMany({ group: 'rs-many' }, { priority: 8 })).toEqual({ count: 0 });
    console.log(`[${db.dialect}] rescheduleMany with a worker running: ${count} of ${MANY} changed before their claim`);
  });
});

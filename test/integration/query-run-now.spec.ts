import { InvalidJobError, InvalidJobStateError, InvalidQueryError, JobNotFoundError } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { type QueueApp } from '../support/queue-app';
import { probedEnqueuer } from '../support/probed-enqueuer';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

const HOUR = 3_600_000;
const DELAYED = 5_000;
/** The retry backoff's cap: full jitter draws the actual delay below it. */
const BACKOFF = 100 * HOUR;

/** `runNow(id)` / `runNowMany(filter)`: a delay or retry backoff dropped, the job run at once. */
describeDialects('runNow / runNowMany', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];

  probedEnqueuer(db, { externalTypes: ['t', 'chaos'], workers, started: (a) => (app = a) });

  const later = () => new Date(Date.now() + HOUR);

  it('runs a job backing off for hours now, in a worker that would not look for minutes', async () => {
    // PostgreSQL wakes the worker by NOTIFY; elsewhere its poll (1 s here) finds the job.
    const pollIntervalMs = db.dialect === 'postgres' ? 600_000 : 1_000;
    workers.push(new WorkerProcess('engine.worker', { ...db.options(), pollIntervalMs, retryBackoff: { baseMs: BACKOFF, maxMs: BACKOFF } }));
    await workers[0].waitFor('ready');
    const job = await app.queue.enqueue({ type: 'chaos', args: { ms: 0, fail: 'once' } });
    // Full jitter draws the delay below BACKOFF: under a minute once in 6,000 runs.
    await eventually('the first attempt failed, the retry far away', async () => {
      const j = (await app.queue.get(job.id))!;
      return j.state === 'ready' && j.attempts === 1 && j.runAfter.getTime() > Date.now() + 60_000;
    }, 30_000);
    // The worker's own claim after that failure has run by now: only the wake-up can start the job.
    await new Promise((r) => setTimeout(r, 1_000));

    const started = Date.now();
    const view = await app.queue.runNow(job.id);
    expect(view.state).toBe('ready');
    expect(view.runAfter.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    await eventually('the second attempt done', async () => (await app.queue.get(job.id))!.state === 'done', 30_000, 50);
    const ms = Date.now() - started;
    console.log(`[${db.dialect}] runNow → done: ${ms} ms (poll ${pollIntervalMs} ms)`);
    expect((await app.queue.get(job.id))!.attempts).toBe(2);
    expect(ms).toBeLessThan(db.dialect === 'postgres' ? 10_000 : 10_000 + pollIntervalMs);
  });

  it('brings a waiting job forward too; a due one is returned unchanged; a claimed, finished, unknown or bad id is refused, changing nothing', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'up', type: 't' },
      { ref: 'down', type: 't', dependsOn: ['up'], runAfter: later() },
      { ref: 'due', type: 't' },
      { ref: 'running', type: 't' },
      { ref: 'done', type: 't' },
    ]);
    await app.rows(`UPDATE jobs SET state = 'running', attempts = 1, started_at = CURRENT_TIMESTAMP WHERE id = ${ids.running}`);
    await app.rows(`UPDATE jobs SET state = 'done', finished_at = CURRENT_TIMESTAMP WHERE id = ${ids.done}`);

    const down = await app.queue.runNow(ids.down);
    expect(down.state).toBe('waiting');
    expect(down.runAfter.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    const due = (await app.queue.get(ids.due))!;
    expect(await app.queue.runNow(ids.due)).toMatchObject({ state: 'ready', runAfter: due.runAfter, updatedAt: due.updatedAt });

    const before = await app.rows(`SELECT id, state, run_after, updated_at FROM jobs ORDER BY id`);
    for (const id of [ids.running, ids.done]) {
      const err = await app.queue.runNow(id).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidJobStateError);
      expect((err as Error).message).toContain('only waiting or ready jobs can be run now');
    }
    await expect(app.queue.runNow(ids.done + 1_000)).rejects.toThrow(JobNotFoundError);
    for (const bad of [0, -3, 2.5, '7', undefined]) await expect(app.queue.runNow(bad as never)).rejects.toThrow(InvalidJobError);
    expect(await app.rows(`SELECT id, state, run_after, updated_at FROM jobs ORDER BY id`)).toEqual(before);
  });

  it(`runNowMany brings ${DELAYED.toLocaleString('en')} delayed jobs of a group forward in batches, and only those`, async () => {
    for (let s = 0; s < DELAYED; s += 1_000) {
      await app.queue.enqueueGraph(Array.from({ length: 1_000 }, (_, i) => ({ ref: `d${s + i}`, type: 't', group: 'acme', runAfter: later() })));
    }
    await app.queue.enqueueGraph(Array.from({ length: 500 }, (_, i) => ({ ref: `o${i}`, type: 't', group: 'globex', runAfter: later() })));
    await app.queue.enqueueGraph(Array.from({ length: 200 }, (_, i) => ({ ref: `n${i}`, type: 't', group: 'acme' })));
    const delayed = (group: string) => app.count(`group_key = '${group}' AND run_after > ${app.db.dialect.now().render(db.dialect).text}`);
    expect(await delayed('acme')).toBe(DELAYED);

    await expect(app.queue.runNowMany({})).rejects.toThrow(InvalidQueryError);
    await expect(app.queue.runNowMany({ group: 'acme', state: ['done', 'running'] })).resolves.toEqual({ count: 0 });
    expect(await delayed('acme')).toBe(DELAYED);

    const started = Date.now();
    expect(await app.queue.runNowMany({ group: 'acme' })).toEqual({ count: DELAYED });
    console.log(`[${db.dialect}] runNowMany of ${DELAYED} delayed jobs: ${Date.now() - started} ms`);
    expect(await delayed('acme')).toBe(0);
    expect(await delayed('globex')).toBe(500);
    expect(await app.queue.runNowMany({ group: 'acme' })).toEqual({ count: 0 });
  });
});

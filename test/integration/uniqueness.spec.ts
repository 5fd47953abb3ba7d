import { InvalidJobError } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

/** 4 processes enqueue `job` concurrently (`perProcess` each, 10 in flight per process); returns every id seen. */
async function storm(db: { options(o?: object): object }, job: Record<string, unknown>, perProcess: number, extra: object = {}): Promise<{ ids: Set<number>; made: number }> {
  const workers = Array.from({ length: 4 }, () => new WorkerProcess('keys.worker', { ...db.options(), externalTypes: ['k'], poolSize: 4, job, count: perProcess, parallel: 10, ...extra }));
  try {
    await Promise.all(workers.map((w) => w.waitFor('ready', 120_000)));
    workers.forEach((w) => w.send('go'));
    const done = await Promise.all(workers.map((w) => w.waitFor('done', 180_000)));
    return {
      ids: new Set(done.flatMap((m) => m.ids as number[])),
      made: done.reduce((n, m) => n + Number(m.made), 0),
    };
  } finally {
    workers.forEach((w) => w.dead || w.kill());
    await Promise.all(workers.map((w) => w.exited));
  }
}

describeDialects('uniqueness modes for key', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['k'] });
  });
  afterAll(() => app?.close());


  it('4 processes x 250 enqueues of one key, in each mode: exactly the expected jobs', async () => {
    const counts: string[] = [];
    for (const mode of ['forever', 'unfinished', 'debounce', 'throttle'] as const) {
      const key = `storm-${mode}`;
      const job = { type: 'k', key, keyMode: mode, ...(mode === 'debounce' ? { debounceMs: 60_000 } : mode === 'throttle' ? { throttleMs: 600_000 } : {}) };
      const before = await app.count(`type = 'k'`);
      const { ids, made } = await storm(db, job, 250);
      expect(made).toBe(1_000);
      const created = (await app.count(`type = 'k'`)) - before;
      counts.push(`${mode}: ${created} job(s) from ${made} enqueues`);
      expect([mode, created, ids.size]).toEqual([mode, 1, 1]);
    }
    process.stdout.write(`[${db.dialect}] uniqueness storm (4 processes): ${counts.join('; ')}\n`);
  });

  it("'unfinished': a new job once the holder is finished, and only one again under a storm", async () => {
    const job = { type: 'k', key: 'singleton', keyMode: 'unfinished' as const };
    const first = await app.queue.enqueue(job);
    expect((await app.queue.enqueue(job)).id).toBe(first.id);
    await app.queue.cancel(first.id); // finished (cancelled)
    const { ids } = await storm(db, job, 250);
    expect(ids.size).toBe(1);
    const [second] = [...ids];
    expect(second).not.toBe(first.id);
    expect(await app.count(`job_key = 'singleton'`)).toBe(1);
    expect((await app.queue.get(second))!.key).toBe('singleton');
    expect((await app.queue.get(first.id))!.key).toBeNull(); // the key moved to the new job
    expect(await app.count(`type = 'k' AND id IN (${first.id}, ${second})`)).toBe(2);
  });

  it("'debounce': the waiting job takes the latest args and its runAfter moves back; a claimed one is not touched", async () => {
    const job = { type: 'k', key: 'debounced', keyMode: 'debounce' as const, debounceMs: 60_000 };
    const { ids } = await storm(db, job, 250);
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    const before = (await app.queue.get(id))!;
    expect(before.args).toEqual({ pid: expect.any(Number), i: expect.any(Number) });
    const t0 = Date.now();
    const after = await app.queue.enqueue({ ...job, args: { final: true } });
    expect(after.id).toBe(id);
    expect(after.args).toEqual({ final: true });
    expect(after.runAfter.getTime()).toBeGreaterThanOrEqual(t0 + 59_000);
    expect(after.runAfter.getTime()).toBeGreaterThan(before.runAfter.getTime());
    // Claimed (running): a new enqueue makes a new job, the running one keeps its args.
    await app.rows(`UPDATE jobs SET state = 'running' WHERE id = ${id}`);
    const next = await app.queue.enqueue({ ...job, args: { later: true } });
    expect(next.id).not.toBe(id);
    expect((await app.queue.get(id))!.args).toEqual({ final: true });
    expect(next.args).toEqual({ later: true });
  });

  it("'throttle': at most one job per window while 4 processes enqueue for 3.5 s", async () => {
    const job = { type: 'k', key: 'throttled', keyMode: 'throttle' as const, throttleMs: 1_000 };
    const { ids, made } = await storm(db, job, 0, { forMs: 3_500, pauseMs: 5, parallel: 4 });
    const rows = await app.rows(`SELECT id FROM jobs WHERE type = 'k' AND id IN (${[...ids].join(',')}) ORDER BY id`);
    const windows = await app.rows(`SELECT window_ends_ms FROM job_queue_keys WHERE job_key = 'throttled'`);
    process.stdout.write(`[${db.dialect}] throttle 1 s: ${rows.length} job(s) from ${made} enqueues over 3.5 s\n`);
    // 3.5 s of enqueues, one window per second: 3 or 4 jobs (the storm's start is not aligned to anything).
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows.length).toBeLessThanOrEqual(4);
    expect(windows).toHaveLength(1);
  });

  it('bad input: unknown mode, missing or stray window, a key longer than the column: typed errors, nothing written', async () => {
    const before = await app.count();
    const keysBefore = Number((await app.rows(`SELECT COUNT(*) AS n FROM job_queue_keys`))[0].n);
    const bad: object[] = [
      { type: 'k', key: 'x', keyMode: 'sometimes' },
      { type: 'k', key: 'x', keyMode: 'debounce' },
      { type: 'k', key: 'x', keyMode: 'throttle', throttleMs: 0 },
      { type: 'k', key: 'x', keyMode: 'throttle', throttleMs: -5 },
      { type: 'k', key: 'x', keyMode: 'debounce', debounceMs: 1.5 },
      { type: 'k', key: 'x', keyMode: 'unfinished', throttleMs: 1_000 },
      { type: 'k', keyMode: 'unfinished' },
      { type: 'k', key: 'x'.repeat(256), keyMode: 'unfinished' },
    ];
    for (const input of bad) await expect(app.queue.enqueue(input as never)).rejects.toThrow(InvalidJobError);
    await expect(app.queue.enqueueGraph([{ ref: 'a', type: 'k', key: 'g', keyMode: 'debounce', debounceMs: 5 } as never])).rejects.toThrow(InvalidJobError);
    expect(await app.count()).toBe(before);
    expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_queue_keys`))[0].n)).toBe(keysBefore);
  });
});

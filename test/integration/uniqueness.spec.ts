import { InvalidJobError } from '../../lib';
import { deleteIdleKeyRows } from '../../lib/enqueue/job-keys.sql';
import { SweepsService } from '../../lib/sweeps/sweeps.service';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

/**
 * 4 enqueue-only processes, booted once per dialect and reused by every storm of this file
 * (booting four Nest apps per storm cost more than the storms themselves).
 */
class StormPool {
  private workers: WorkerProcess[] = [];
  private rounds = 0;

  async start(db: { options(o?: object): object }): Promise<void> {
    this.workers = Array.from({ length: 4 }, () => new WorkerProcess('keys.worker', { ...db.options(), externalTypes: ['k'], poolSize: 4 }));
    await Promise.all(this.workers.map((w) => w.waitFor('ready', 120_000)));
  }

  /** The 4 processes enqueue `job` concurrently (`perProcess` each, 10 in flight per process); every id seen. */
  async storm(job: Record<string, unknown>, perProcess: number, extra: object = {}): Promise<{ ids: Set<number>; made: number; spanMs: number }> {
    const round = ++this.rounds;
    const go = `go ${JSON.stringify({ round, job, count: perProcess, parallel: 10, ...extra })}`;
    this.workers.forEach((w) => w.send(go));
    const done = await Promise.all(this.workers.map((w) => w.waitFor(`done-${round}`, 180_000)));
    return {
      ids: new Set(done.flatMap((m) => m.ids as number[])),
      made: done.reduce((n, m) => n + Number(m.made), 0),
      // From the first process's first enqueue to the last one's last (one host, one clock).
      spanMs: Math.max(...done.map((m) => Number(m.to))) - Math.min(...done.map((m) => Number(m.from))),
    };
  }

  async stop(): Promise<void> {
    this.workers.forEach((w) => w.dead || w.kill());
    await Promise.all(this.workers.map((w) => w.exited));
  }
}

function agoSql(dialect: string, hours: number): string {
  if (dialect === 'postgres') return `now() - interval '${hours} hours'`;
  if (dialect === 'mysql') return `UTC_TIMESTAMP(3) - INTERVAL ${hours} HOUR`;
  return `strftime('%Y-%m-%d %H:%M:%f', 'now', '-${hours} hours')`;
}

describeDialects('uniqueness modes for key', (db) => {
  let app: QueueApp;
  const pool = new StormPool();
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['k'] });
    await pool.start(db);
  }, 180_000);
  afterAll(async () => {
    await pool.stop();
    await app?.close();
  });


  it('4 processes x 250 enqueues of one key, in each mode: exactly the expected jobs', async () => {
    const counts: string[] = [];
    for (const mode of ['forever', 'unfinished', 'debounce', 'throttle'] as const) {
      const key = `storm-${mode}`;
      const job = { type: 'k', key, keyMode: mode, ...(mode === 'debounce' ? { debounceMs: 60_000 } : mode === 'throttle' ? { throttleMs: 600_000 } : {}) };
      const before = await app.count(`type = 'k'`);
      const { ids, made } = await pool.storm(job, 250);
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
    const { ids } = await pool.storm(job, 250);
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
    const { ids } = await pool.storm(job, 250);
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    const before = (await app.queue.get(id))!;
    expect(before.args).toEqual({ pid: expect.any(Number), i: expect.any(Number) });
    // Clocks count milliseconds: the storm's last enqueue and this one fell in the same one once.
    await new Promise((r) => setTimeout(r, 5));
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
    const { ids, made, spanMs } = await pool.storm(job, 0, { forMs: 3_500, pauseMs: 5, parallel: 4 });
    const rows = await app.rows(`SELECT id FROM jobs WHERE type = 'k' AND id IN (${[...ids].join(',')}) ORDER BY id`);
    const windows = await app.rows(`SELECT window_ends_ms FROM job_queue_keys WHERE job_key = 'throttled'`);
    process.stdout.write(`[${db.dialect}] throttle 1 s: ${rows.length} job(s) from ${made} enqueues over ${spanMs} ms (3.5 s per process)\n`);
    // One window per second: at most one job per second the storm lasted, plus the first (4 for
    // 3.5 s when the processes start together; more when the OS starts them apart), and at least 3.
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows.length).toBeLessThanOrEqual(Math.floor(spanMs / 1_000) + 1);
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
  describe('job_queue_keys cleanup', () => {
    let swept: QueueApp;
    beforeAll(async () => {
      // Retention in batches of 2 (the key sweep then reads chunks of 2 keys), never on its own timer.
      swept = await startQueueApp(db, { worker: false, externalTypes: ['k'], retention: { olderThanMs: 3_600_000, batchSize: 2, intervalMs: 3_600_000 } });
    });
    afterAll(() => swept?.close());
    const keyRows = async (prefix: string) =>
      (await swept.rows(`SELECT job_key FROM job_queue_keys WHERE job_key LIKE '${prefix}%' ORDER BY job_key`)).map((r) => String(r.job_key));
    const finishOld = (where: string) => swept.rows(`UPDATE jobs SET state = 'done', finished_at = ${agoSql(db.dialect, 2)} WHERE ${where}`);
    const retain = () => swept.module.get(SweepsService).retain();

    it('rows go with the jobs that held their keys; an open throttle window (and its job), a held key and forever keys stay', async () => {
      const make = async (key: string, extra: object) => (await swept.queue.enqueue({ type: 'k', key, ...extra } as never)).id;
      const ids: Record<string, number> = {};
      for (let i = 0; i < 3; i++) ids[`u${i}`] = await make(`gc-u${i}`, { keyMode: 'unfinished' });
      for (let i = 0; i < 3; i++) ids[`d${i}`] = await make(`gc-d${i}`, { keyMode: 'debounce', debounceMs: 60_000 });
      ids.tClosed = await make('gc-t-closed', { keyMode: 'throttle', throttleMs: 1_000 });
      ids.tOpen = await make('gc-t-open', { keyMode: 'throttle', throttleMs: 3_600_000 });
      ids.held = await make('gc-held', { keyMode: 'unfinished' });
      ids.forever = await make('gc-forever', {});
      expect(await keyRows('gc-')).toHaveLength(9); // forever keys never have a row
      // All finished long ago but 'held' (still ready); the short window has ended.
      await finishOld(`id IN (${Object.entries(ids).filter(([k]) => k !== 'held').map(([, id]) => id).join(', ')})`);
      await swept.rows(`UPDATE job_queue_keys SET window_ends_ms = 1000 WHERE job_key = 'gc-t-closed'`);
      await retain();
      // The holder of an open throttle window stays, however old: the enqueues in it return it.
      expect(await swept.count(`id IN (${Object.values(ids).join(', ')})`)).toBe(2);
      expect(await swept.count(`id = ${ids.tOpen}`)).toBe(1);
      expect(await keyRows('gc-')).toEqual(['gc-held', 'gc-t-open']);
      const inWindow = await make('gc-t-open', { keyMode: 'throttle', throttleMs: 3_600_000 });
      expect(inWindow).toBe(ids.tOpen);
      // The held key still dedupes, and works as before once its holder finished and went.
      expect(await make('gc-held', { keyMode: 'unfinished' })).toBe(ids.held);
      await finishOld(`id IN (${ids.held}, ${inWindow})`);
      await swept.rows(`UPDATE job_queue_keys SET window_ends_ms = 1000 WHERE job_key = 'gc-t-open'`);
      await retain();
      expect(await keyRows('gc-')).toEqual([]);
      const again = await make('gc-held', { keyMode: 'unfinished' });
      expect(again).not.toBe(ids.held);
      expect(await make('gc-held', { keyMode: 'unfinished' })).toBe(again);
      expect(await keyRows('gc-')).toEqual(['gc-held']);
      // A forever key keeps deduping while its job exists, whatever the sweeps do.
      const forever = await make('gc-forever2', {});
      await retain();
      expect(await make('gc-forever2', {})).toBe(forever);
    });

    it('rows nobody holds (an orphan from before, a job deleted by hand) go through the key sweep, chunk by chunk', async () => {
      const values = Array.from({ length: 25 }, (_, i) => `('gc-orphan-${String(i).padStart(2, '0')}', NULL)`).join(', ');
      await swept.rows(`INSERT INTO job_queue_keys (job_key, window_ends_ms) VALUES ${values}`);
      await swept.rows(`INSERT INTO job_queue_keys (job_key, window_ends_ms) VALUES ('gc-orphan-open', ${Date.now() + 3_600_000})`);
      // 10 chunks of 2 keys per run: the 26 rows (and any others) take more than one run.
      const runs: number[] = [];
      for (let run = 0; run < 10 && (await keyRows('gc-orphan-')).length > 1; run++) {
        await retain();
        runs.push((await keyRows('gc-orphan-')).length);
      }
      process.stdout.write(`[${db.dialect}] key sweep: orphan rows left after each retention run ${runs.join(', ')}\n`);
      expect(runs.length).toBeGreaterThan(1);
      expect(await keyRows('gc-orphan-')).toEqual(['gc-orphan-open']);
    });

    for (const mode of ['unfinished', 'debounce', 'throttle'] as const) {
      it(`'${mode}': 4 processes x 250 enqueues over 20 keys while rows are deleted under them: still one job per key`, async () => {
        const prefix = `race-${mode}`;
        const job = { type: 'k', key: prefix, keyMode: mode, ...(mode === 'debounce' ? { debounceMs: 60_000 } : mode === 'throttle' ? { throttleMs: 600_000 } : {}) };
        const lastId = Number((await app.rows(`SELECT COALESCE(MAX(id), 0) AS n FROM jobs`))[0].n);
        const keys = Array.from({ length: 20 }, (_, i) => `${prefix}-${i}`);
        let stop = false;
        let deleted = 0;
        let sweeps = 0;
        // The deleting primitive itself, on every key, held or not, as fast as it goes.
        const sweeper = (async () => {
          while (!stop) {
            deleted += await swept.db.transaction((tx) => deleteIdleKeyRows(tx, keys));
            sweeps++;
            await new Promise((r) => setTimeout(r, 5));
          }
        })();
        const { ids, made } = await pool.storm(job, 250, { keys: 20 }).finally(() => (stop = true));
        await sweeper;
        // This storm's jobs: those holding its keys, or that held one and gave it up to a later job
        // (a storm of an earlier test that timed out under load may still be adding jobs of its own).
        const created = await app.count(`type = 'k' AND id > ${lastId} AND (job_key IS NULL OR job_key LIKE '${prefix}-%')`);
        const holders = await app.rows(`SELECT COUNT(DISTINCT job_key) AS n FROM jobs WHERE job_key LIKE '${prefix}-%'`);
        process.stdout.write(`[${db.dialect}] key rows deleted under a storm, ${mode}: ${created} job(s) from ${made} enqueues over 20 keys; ${deleted} row(s) deleted by ${sweeps} sweeps meanwhile\n`);
        expect([mode, created, ids.size, Number(holders[0].n)]).toEqual([mode, 20, 20, 20]);
        // Without a window, rows go and come back; an open throttle window's row is never deleted.
        if (mode === 'throttle') expect(deleted).toBe(0);
        else expect(deleted).toBeGreaterThan(0);
      });
    }
  });
});

import { jest } from '@jest/globals';
import { InvalidJobError, InvalidJobStateError, InvalidQueryError, JobNotFoundError, JobStillNeededError } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { Sql } from '../../lib/database/sql';
import { SQLITE_REMOVAL_BATCH_BYTES } from '../../lib/removal/job-removal.sql';
import { describeDialects } from '../support/describe-dialects';
import { lockWaitCounter } from '../support/lock-waits';
import { finalizeCounts } from '../support/probe-tables';
import { type QueueApp } from '../support/queue-app';
import { probedEnqueuer } from '../support/probed-enqueuer';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

const TYPES = ['t', 'chaos'];
const TENANT_JOBS = 20_000;

/**
 * `remove(id)` / `removeMany(filter)`: finished jobs deleted for good with their edges and key
 * rows, in short transactions, never a job unfinished work still needs, safe while workers run.
 */
describeDialects('remove / removeMany', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];
  const lockWaits = lockWaitCounter(() => app);

  probedEnqueuer(db, { externalTypes: TYPES, workers, started: (a) => (app = a) });

  const finish = (ids: number[], state = 'done') =>
    app.rows(`UPDATE jobs SET state = '${state}', finished_at = CURRENT_TIMESTAMP WHERE id IN (${ids.join(', ')})`);
  const edges = async (id: number) => Number((await app.rows(`SELECT COUNT(*) AS n FROM job_deps WHERE job_id = ${id} OR depends_on_id = ${id}`))[0].n);
  const keyRows = async (key: string) => Number((await app.rows(`SELECT COUNT(*) AS n FROM job_queue_keys WHERE job_key = '${key}'`))[0].n);

  it('remove(id) deletes a finished job with its edges and its key row; the key enqueues a new job after', async () => {
    const a = await app.queue.enqueue({ type: 't', key: 'report:7' });
    const { b } = await app.queue.enqueueGraph([{ ref: 'b', type: 't', dependsOn: [a.id] }]);
    await finish([a.id, b]);
    expect(await edges(a.id)).toBe(1);
    expect((await app.queue.enqueue({ type: 't', key: 'report:7' })).id).toBe(a.id); // the key returns the job while it exists

    await app.queue.remove(a.id);
    expect(await app.queue.get(a.id)).toBeNull();
    expect(await edges(a.id)).toBe(0);
    expect(await keyRows('report:7')).toBe(0);
    expect((await app.queue.get(b))!.state).toBe('done');
    const again = await app.queue.enqueue({ type: 't', key: 'report:7' });
    expect(again.id).not.toBe(a.id);
    await expect(app.queue.remove(a.id)).rejects.toThrow(JobNotFoundError);
  });

  it('remove(id) refuses, changing nothing: an unknown id, an unfinished job, a finished one unfinished work needs, a bad id', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'up', type: 't' },
      { ref: 'down', type: 't', dependsOn: ['up'] },
      { ref: 'box', type: 't' },
      { ref: 'child', type: 't', parent: 'box' },
      { ref: 'sibling', type: 't', parent: 'box' },
      { ref: 'waiting', type: 't' },
    ]);
    // The enqueues of a key's open throttle window return its job.
    const throttled = await app.queue.enqueue({ type: 't', key: 'digest:1', keyMode: 'throttle', throttleMs: 3_600_000 });
    await finish([ids.up, ids.child, throttled.id]);
    const before = await app.rows(`SELECT id, state FROM jobs ORDER BY id`);
    const edgesBefore = await app.rows(`SELECT job_id, depends_on_id FROM job_deps ORDER BY job_id, depends_on_id`);

    await expect(app.queue.remove(ids.waiting + 1_000)).rejects.toThrow(JobNotFoundError);
    const unfinished = await app.queue.remove(ids.waiting).catch((e: unknown) => e);
    expect(unfinished).toBeInstanceOf(InvalidJobStateError);
    expect(unfinished).toMatchObject({ code: 'INVALID_JOB_STATE', state: 'ready', operation: 'remove' });
    expect((unfinished as Error).message).toContain('only done or failed or cancelled jobs can be removed');
    // A dependent still waiting may read its result; an open container still counts its children;
    // the throttle window's enqueues return the job.
    for (const needed of [ids.up, ids.child, throttled.id]) {
      const err = await app.queue.remove(needed).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JobStillNeededError);
      expect(err).toMatchObject({ code: 'JOB_STILL_NEEDED', id: needed });
    }
    for (const bad of [0, -1, 1.5, '1', null]) await expect(app.queue.remove(bad as never)).rejects.toThrow(InvalidJobError);

    expect(await app.rows(`SELECT id, state FROM jobs ORDER BY id`)).toEqual(before);
    expect(await app.rows(`SELECT job_id, depends_on_id FROM job_deps ORDER BY job_id, depends_on_id`)).toEqual(edgesBefore);

    // Once what needed them has finished, they go.
    await finish([ids.down, ids.sibling, ids.box]);
    await app.queue.remove(ids.up);
    await app.queue.remove(ids.child);
    expect(await app.count(`id IN (${ids.up}, ${ids.child})`)).toBe(0);
  });

  it(`removeMany takes one tenant's ${TENANT_JOBS.toLocaleString('en')} finished jobs, in batches, and leaves everything else`, async () => {
    // acme: finished jobs in all three states, open jobs, and finished upstreams of open dependents;
    // globex: finished jobs of the same types.
    for (let start = 0; start < TENANT_JOBS; start += 1_000) {
      await app.queue.enqueueGraph(Array.from({ length: 1_000 }, (_, i) => ({ ref: `a${start + i}`, type: 't', group: 'acme', args: { n: start + i } })));
    }
    const tied = Object.values(await app.queue.enqueueGraph(Array.from({ length: 100 }, (_, i) => ({ ref: `u${i}`, type: 't', group: 'acme' }))));
    await app.queue.enqueueGraph(tied.map((id, i) => ({ ref: `d${i}`, type: 't', group: 'acme', dependsOn: [id] })));
    await app.queue.enqueueGraph(Array.from({ length: 500 }, (_, i) => ({ ref: `o${i}`, type: 't', group: 'acme' })));
    await app.queue.enqueueGraph(Array.from({ length: 3_000 }, (_, i) => ({ ref: `g${i}`, type: 't', group: 'globex' })));
    await app.rows(`UPDATE jobs SET state = CASE WHEN id % 3 = 0 THEN 'done' WHEN id % 3 = 1 THEN 'failed' ELSE 'cancelled' END,
      finished_at = CURRENT_TIMESTAMP WHERE ref LIKE 'a%' OR ref LIKE 'g%'`);
    await finish(tied);

    await expect(app.queue.removeMany({})).rejects.toThrow(InvalidQueryError);
    await expect(app.queue.removeMany({ state: ['waiting', 'ready'], group: 'acme' })).resolves.toEqual({ count: 0 });
    await expect(app.queue.removeMany({ group: 'acme', bogus: 1 } as never)).rejects.toThrow(InvalidQueryError);
    expect(await app.count()).toBe(TENANT_JOBS + 200 + 500 + 3_000);

    // The statements of removeMany's transactions: none larger than a batch.
    const database = app.module.get(JobQueueDatabase);
    const transaction = database.transaction.bind(database);
    let transactions = 0;
    let largest = 0;
    const spy = jest.spyOn(database, 'transaction').mockImplementation((work, options) =>
      transaction((tx) => {
        transactions++;
        return work({
          dialect: tx.dialect,
          run: (s: Sql) => {
            const { text, params } = s.render(db.dialect);
            if (text.startsWith('DELETE FROM jobs WHERE')) largest = Math.max(largest, params.length);
            return tx.run(s);
          },
        });
      }, options),
    );
    const started = Date.now();
    let result: { count: number };
    try {
      result = await app.queue.removeMany({ group: 'acme' });
    } finally {
      spy.mockRestore();
    }
    const ms = Date.now() - started;
    console.log(`[${db.dialect}] removeMany of ${TENANT_JOBS} finished jobs beside 3,600 others: ${ms} ms, ${transactions} transactions`);
    expect(result).toEqual({ count: TENANT_JOBS });
    expect(largest).toBeLessThanOrEqual(500);
    expect(transactions).toBeGreaterThanOrEqual(TENANT_JOBS / 500);
    expect(await app.count(`group_key = 'acme'`)).toBe(700); // 100 tied upstreams, their 100 dependents, 500 open
    expect(await app.count(`group_key = 'acme' AND state = 'done'`)).toBe(100);
    expect(await app.count(`group_key = 'globex'`)).toBe(3_000);
    expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_deps`))[0].n)).toBe(100);
  });

  it('removeMany while 2 worker processes run chains: every job runs and is finalized once, no upstream goes before its dependent', async () => {
    const options = { ...db.options(), pollIntervalMs: 100, concurrency: 10 };
    workers.push(new WorkerProcess('engine.worker', options), new WorkerProcess('engine.worker', options));
    await Promise.all(workers.map((w) => w.waitFor('ready')));
    // 500 chains of 4: each job's upstream is done before it starts, and must stay until it is done.
    const chains: number[][] = [];
    for (let c = 0; c < 500; c += 100) {
      const nodes = [];
      for (let k = c; k < c + 100; k++) {
        for (let s = 0; s < 4; s++) nodes.push({ ref: `c${k}-${s}`, type: 'chaos', args: { ms: 1 }, dependsOn: s ? [`c${k}-${s - 1}`] : [] });
      }
      const ids = await app.queue.enqueueGraph(nodes);
      for (let k = c; k < c + 100; k++) chains.push([0, 1, 2, 3].map((s) => ids[`c${k}-${s}`]));
    }
    const all = chains.flat();
    let removed = 0;
    let early = 0;
    await eventually(
      'every chain done and removed',
      async () => {
        removed += (await app.queue.removeMany({ state: 'done', type: 'chaos' })).count;
        // An upstream gone while its dependent is still open was removed too early.
        const state = new Map((await app.rows(`SELECT id, state FROM jobs`)).map((r) => [Number(r.id), String(r.state)]));
        for (const chain of chains) {
          for (let s = 0; s < 3; s++) if (!state.has(chain[s]) && state.has(chain[s + 1]) && state.get(chain[s + 1]) !== 'done') early++;
        }
        return removed === all.length;
      },
      120_000,
      50,
    );
    expect(early).toBe(0);
    expect(await app.count()).toBe(0);
    expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_deps`))[0].n)).toBe(0);
    const runs = await app.rows(`SELECT job_id, COUNT(*) AS n FROM executions GROUP BY job_id`);
    expect(runs.length).toBe(all.length);
    expect(runs.every((r) => Number(r.n) === 1)).toBe(true);
    const finalized = await finalizeCounts(app);
    expect(all.every((id) => finalized.get(id) === 1)).toBe(true);
  });

  if (db.dialect !== 'sqlite') {
    // SQLite has one writer: the enqueue's transaction and remove() cannot interleave there.
    it('remove(id) of an upstream that an enqueue is adding a dependent to, in a transaction still open, refuses once that commits', async () => {
      const up = await app.queue.enqueue({ type: 't' });
      await finish([up.id]);
      let commit!: () => void;
      const committed = new Promise<void>((r) => (commit = r));
      let added: number | undefined;
      // The enqueue locks its upstream FOR SHARE and holds it until the application's transaction ends.
      const enqueuing = app.dataSource.transaction(async (manager) => {
        added = (await app.queue.enqueueGraph([{ ref: 'd', type: 't', dependsOn: [up.id] }], { manager: manager as never })).d;
        await committed;
      });
      await eventually('the dependent enqueued', async () => added !== undefined, 30_000);
      const removing = app.queue.remove(up.id).catch((e: unknown) => e);
      await eventually('remove() waiting for the upstream', async () => (await lockWaits()) > 0, 30_000, 200);
      commit();
      await enqueuing;
      expect(await removing).toBeInstanceOf(JobStillNeededError);
      expect((await app.queue.get(up.id))!.state).toBe('done');
      expect((await app.queue.get(added!))!.state).toBe('ready');
      expect(await edges(up.id)).toBe(1);
    });
  }

  if (db.dialect === 'sqlite') {
    it('SQLite frees at most 8 MB of values per removeMany transaction', async () => {
      const pad = 'x'.repeat(400_000);
      await app.queue.enqueueGraph(Array.from({ length: 60 }, (_, i) => ({ ref: `b${i}`, type: 't', group: 'big', args: { i, pad } })));
      await app.rows(`UPDATE jobs SET state = 'done', result = args, finished_at = CURRENT_TIMESTAMP`);
      const sizes = new Map((await app.rows(`SELECT id, octet_length(args) + octet_length(result) AS bytes FROM jobs`)).map((r) => [Number(r.id), Number(r.bytes)]));
      const database = app.module.get(JobQueueDatabase);
      const transaction = database.transaction.bind(database);
      const deletes: number[][] = [];
      const spy = jest.spyOn(database, 'transaction').mockImplementation((work, options) =>
        transaction(
          (tx) =>
            work({
              dialect: tx.dialect,
              run: (s: Sql) => {
                const { text, params } = s.render('sqlite');
                if (text.startsWith('DELETE FROM jobs WHERE id IN')) deletes.push(params.map((id) => sizes.get(Number(id))!));
                return tx.run(s);
              },
            }),
          options,
        ),
      );
      try {
        expect(await app.queue.removeMany({ group: 'big' })).toEqual({ count: 60 });
      } finally {
        spy.mockRestore();
      }
      expect(deletes.flat().length).toBe(60);
      for (const batch of deletes) expect(batch.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(SQLITE_REMOVAL_BATCH_BYTES + Math.max(...batch));
      expect(deletes.length).toBeGreaterThanOrEqual(Math.ceil((60 * 800_000) / (SQLITE_REMOVAL_BATCH_BYTES + 800_000)));
      expect(await app.count()).toBe(0);
    });
  }
});

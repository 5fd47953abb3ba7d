import { Injectable } from '@nestjs/common';
import { JobHandler, type GraphNode } from '../../lib';
import { PROMOTION_SLICE, promoteNextSlice } from '../../lib/finalize/promotion-slices.sql';
import { SlicedPromotions } from '../../lib/finalize/sliced-promotions';
import { describeDialects } from '../support/describe-dialects';
import { finalizeCounts, installProbes } from '../support/probe-tables';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

/**
 * Every dialect counts down the dependents of a job with more than PROMOTION_SLICE of them in
 * slices, a transaction each, behind a cursor (SQLite migration 10, PostgreSQL migration 24,
 * MySQL migration 15). These specs stop a worker right after its first slice committed, as a crash there would,
 * and check that another process finishes the promotion from the cursor: every dependent runs,
 * each finalized once, none counted down twice.
 */
const WIDTH = PROMOTION_SLICE * 2 + 500;

@Injectable()
class Handlers {
  @JobHandler('noop')
  async noop(): Promise<null> {
    return null;
  }
}

/** A worker whose sliced promotions stop after one slice: what a process that died there leaves. */
async function workerThatStopsAfterOneSlice(db: Parameters<typeof startQueueApp>[0]): Promise<QueueApp> {
  const app = await startQueueApp(db, { concurrency: 10, pollIntervalMs: 50, reclaimIntervalMs: 600_000 }, [Handlers]);
  const promotions = app.module.get(SlicedPromotions);
  let slices = 0;
  promotions.resume = async () => {
    if (slices++ === 0) await app.db.transaction((tx) => promoteNextSlice(tx));
  };
  return app;
}

async function stateOf(app: QueueApp, id: number): Promise<{ state: string; pending_deps: number }> {
  const [row] = await app.rows(`SELECT state, pending_deps FROM jobs WHERE id = ${id}`);
  return { state: String(row.state), pending_deps: Number(row.pending_deps) };
}

describeDialects(
  `promotions of more than ${PROMOTION_SLICE} dependents in slices`,
  (db) => {
    it(`a stop between slices loses no dependent of ${WIDTH}: the next process goes on from the cursor`, async () => {
      const first = await workerThatStopsAfterOneSlice(db);
      await installProbes(first);
      const nodes: GraphNode[] = [{ ref: 'root', type: 'noop' }];
      const mids: string[] = [];
      for (let i = 0; i < WIDTH; i++) {
        nodes.push({ ref: `m${i}`, type: 'noop', dependsOn: ['root'] });
        mids.push(`m${i}`);
      }
      nodes.push({ ref: 'sink', type: 'noop', dependsOn: mids });
      const ids = await first.queue.enqueueGraph(nodes);
      const midIds = mids.map((m) => ids[m]);
      // The first slice's dependents run; then nothing more becomes ready.
      await eventually('the first slice done', async () => (await first.count(`state = 'done'`)) === PROMOTION_SLICE + 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(await first.count(`state = 'done'`)).toBe(PROMOTION_SLICE + 1);
      expect(await first.count(`state = 'waiting' AND pending_deps = 1 AND id <> ${ids.sink}`)).toBe(WIDTH - PROMOTION_SLICE);
      const cursor = await first.rows(`SELECT job_id, after_job_id FROM job_queue_promotions`);
      expect(cursor.map((c) => ({ job_id: Number(c.job_id), after_job_id: Number(c.after_job_id) }))).toEqual([
        { job_id: ids.root, after_job_id: Math.min(...midIds) + PROMOTION_SLICE - 1 },
      ]);
      await first.close();

      const second = await startQueueApp(db, { concurrency: 10, pollIntervalMs: 50, reclaimIntervalMs: 100 }, [Handlers]);
      try {
        expect(await second.queue.waitFor(ids.sink, { timeoutMs: 120_000 })).toMatchObject({ state: 'done' });
        expect(await second.count(`state <> 'done'`)).toBe(0);
        expect(await second.count(`pending_deps <> 0`)).toBe(0);
        expect(await second.rows(`SELECT * FROM job_queue_promotions`)).toEqual([]);
        const counts = await finalizeCounts(second);
        expect(counts.size).toBe(nodes.length);
        expect([...counts.values()].every((n) => n === 1)).toBe(true);
      } finally {
        await second.close();
      }
    }, 180_000);

    it('a job inside a container, finalized by the transactional path, opens its cursor there too', async () => {
      // A job with a parent never takes PostgreSQL's one-statement complete: this is cascade.sql.ts's cursor.
      const first = await workerThatStopsAfterOneSlice(db);
      await resetTables(first);
      await first.rows(`DELETE FROM job_queue_promotions`);
      await installProbes(first);
      const nodes: GraphNode[] = [{ ref: 'box', type: 'box' }, { ref: 'root', type: 'noop', parent: 'box' }];
      for (let i = 0; i < WIDTH; i++) nodes.push({ ref: `m${i}`, type: 'noop', dependsOn: ['root'] });
      const ids = await first.queue.enqueueGraph(nodes);
      const firstMid = ids.m0;
      // root, its container and the first slice's dependents; then nothing more becomes ready.
      await eventually('the first slice done', async () => (await first.count(`state = 'done'`)) === PROMOTION_SLICE + 2);
      const cursor = await first.rows(`SELECT job_id, after_job_id FROM job_queue_promotions`);
      expect(cursor.map((c) => [Number(c.job_id), Number(c.after_job_id)])).toEqual([[ids.root, firstMid + PROMOTION_SLICE - 1]]);
      await first.close();

      const second = await startQueueApp(db, { concurrency: 10, pollIntervalMs: 50, reclaimIntervalMs: 100 }, [Handlers]);
      try {
        await eventually('every job done', async () => (await second.count(`state <> 'done'`)) === 0, 120_000);
        expect(await second.count(`pending_deps <> 0`)).toBe(0);
        await eventually('the cursor gone', async () => !(await second.rows(`SELECT * FROM job_queue_promotions`)).length);
        // Every job of this graph finalized once; the container settles by roll-up, not by a finalize of its own.
        const counts = await finalizeCounts(second);
        const finalized = Object.entries(ids).filter(([ref]) => ref !== 'box').map(([, id]) => counts.get(id));
        expect(finalized).toHaveLength(nodes.length - 1);
        expect(finalized.every((n) => n === 1)).toBe(true);
      } finally {
        await second.close();
      }
    }, 180_000);

    it('retry() of a dependent the slices have not reached yet still counts that upstream as open', async () => {
      const first = await workerThatStopsAfterOneSlice(db);
      await first.rows(`DELETE FROM job_deps`);
      await first.rows(`DELETE FROM jobs`);
      const nodes: GraphNode[] = [
        { ref: 'root', type: 'noop' },
        // Held back: never due in this spec, so `late` keeps waiting for it.
        { ref: 'gate', type: 'noop', runAfter: new Date(Date.now() + 3_600_000) },
      ];
      for (let i = 0; i < WIDTH; i++) nodes.push({ ref: `m${i}`, type: 'noop', dependsOn: ['root'] });
      nodes.push({ ref: 'late', type: 'noop', dependsOn: ['root', 'gate'] }); // last id: beyond the first slice
      const ids = await first.queue.enqueueGraph(nodes);
      await eventually('the first slice done', async () => (await first.count(`state = 'done'`)) === PROMOTION_SLICE + 1);
      await first.close();

      const admin = await startQueueApp(db, { worker: false, externalTypes: ['noop'] });
      try {
        await admin.queue.cancel(ids.late);
        await admin.queue.retry(ids.late);
        // root is done, but its countdown has not reached `late`: both upstreams still count.
        expect(await stateOf(admin, ids.late)).toEqual({ state: 'waiting', pending_deps: 2 });
      } finally {
        await admin.close();
      }

      const second = await startQueueApp(db, { concurrency: 10, pollIntervalMs: 50, reclaimIntervalMs: 100 }, [Handlers]);
      try {
        await eventually('every dependent of root done', async () => (await second.count(`state = 'done'`)) === WIDTH + 1, 120_000);
        await eventually('the cursor gone', async () => !(await second.rows(`SELECT * FROM job_queue_promotions`)).length);
        // Counted down once by the slice, for root; still waiting for gate.
        expect(await stateOf(second, ids.late)).toEqual({ state: 'waiting', pending_deps: 1 });
      } finally {
        await second.close();
      }
    }, 180_000);
  },
  ['sqlite', 'postgres', 'mysql'],
);

/**
 * PostgreSQL: each of the three batched completes (plain, traced, with views; migration 24) opens
 * the cursor instead of counting down a job with more than PROMOTION_SLICE dependents, says so in
 * a 'sliced' row, still counts down the dependents of the other jobs of its batch, and the slices
 * then ready every dependent once.
 */
describeDialects(
  'PostgreSQL: the batched completes open a cursor for a job with many dependents',
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['noop'] });
    });
    afterAll(() => app?.close());
    beforeEach(() => resetTables(app));

    const calls: Array<[string, (ids: string, results: string) => string]> = [
      ['job_queue_complete (plain)', (ids, results) => `SELECT kind, job FROM job_queue_complete('w', ${ids}, ${results}, false)`],
      ['job_queue_complete (traced)', (ids, results) => `SELECT kind, job FROM job_queue_complete('w', ${ids}, ${results}, false, ARRAY[NULL, NULL]::text[])`],
      ['job_queue_complete_views', (ids, results) => `SELECT kind, job FROM job_queue_complete_views('w', ${ids}, ${results}, false, NULL::text[])`],
    ];

    it.each(calls)('%s', async (_name, call) => {
      const width = PROMOTION_SLICE + 700;
      const nodes: GraphNode[] = [{ ref: 'root', type: 'noop' }, { ref: 'small', type: 'noop' }, { ref: 'after-small', type: 'noop', dependsOn: ['small'] }];
      for (let i = 0; i < width; i++) nodes.push({ ref: `m${i}`, type: 'noop', dependsOn: ['root'] });
      const ids = await app.queue.enqueueGraph(nodes);
      await app.rows(`UPDATE jobs SET state = 'running', lease_owner = 'w', attempts = 1 WHERE id IN (${ids.root}, ${ids.small})`);
      const rows = await app.rows(call(`ARRAY[${ids.root}, ${ids.small}]::bigint[]`, `ARRAY['1', '2']::text[]`));
      const kinds = new Map(rows.filter((r) => r.kind !== 'view').map((r) => [String(r.kind), r.job === null ? null : Number(r.job)]));
      expect(kinds.get('sliced')).toBe(1);
      expect(kinds.get('promoted')).toBe(1); // after-small, counted down in the complete itself
      expect(await stateOf(app, ids['after-small'])).toEqual({ state: 'ready', pending_deps: 0 });
      const cursor = await app.rows(`SELECT job_id, after_job_id FROM job_queue_promotions`);
      expect(cursor.map((c) => [Number(c.job_id), Number(c.after_job_id)])).toEqual([[ids.root, 0]]);
      expect(await app.count(`state = 'waiting'`)).toBe(width);

      let slices = 0;
      let promoted = 0;
      for (;;) {
        const slice = await app.db.transaction((tx) => promoteNextSlice(tx));
        if (!slice.found) break;
        slices++;
        promoted += slice.promoted;
      }
      expect(slices).toBe(2);
      expect(promoted).toBe(width);
      expect(await app.count(`state = 'ready' AND pending_deps = 0`)).toBe(width + 1);
      expect(await app.rows(`SELECT * FROM job_queue_promotions`)).toEqual([]);
    });
  },
  ['postgres'],
);

describeDialects(
  'a promotion cursor shared by processes',
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['noop'] });
    });
    afterAll(() => app?.close());
    beforeEach(() => resetTables(app));

    it('two processes slicing the same cursor at once count every dependent down once', async () => {
      const width = PROMOTION_SLICE * 6 + 321;
      const nodes: GraphNode[] = [{ ref: 'root', type: 'noop' }];
      for (let i = 0; i < width; i++) nodes.push({ ref: `m${i}`, type: 'noop', dependsOn: ['root'] });
      const ids = await app.queue.enqueueGraph(nodes);
      // What a finalize of root leaves: root done, its cursor at the start.
      await app.rows(`UPDATE jobs SET state = 'done' WHERE id = ${ids.root}`);
      await app.rows(`INSERT INTO job_queue_promotions (job_id, after_job_id) VALUES (${ids.root}, 0)`);
      const other = await startQueueApp(db, { worker: false, externalTypes: ['noop'] });
      try {
        // Each loop slices until the cursor is gone; a cursor the other holds is skipped, not waited for.
        const loop = async (on: QueueApp) => {
          let promoted = 0;
          while ((await on.rows(`SELECT job_id FROM job_queue_promotions`)).length > 0) {
            const slice = await on.db.transaction((tx) => promoteNextSlice(tx, 500));
            promoted += slice.promoted;
            await new Promise((r) => setImmediate(r));
          }
          return promoted;
        };
        const [a, b] = await Promise.all([loop(app), loop(other)]);
        // MySQL cannot count what a slice readied (-1 each); the rows below are the proof everywhere.
        if (db.dialect !== 'mysql') expect(a + b).toBe(width);
        expect(await app.count(`state = 'ready' AND pending_deps = 0`)).toBe(width);
        expect(await app.count(`pending_deps <> 0`)).toBe(0);
      } finally {
        await other.close();
      }
    });
  },
);

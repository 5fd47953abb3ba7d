import { Injectable } from '@nestjs/common';
import { JobHandler } from '../../lib';
import { ensureWeightSet, WEIGHTS_IN_CALL_MAX, weightSetId } from '../../lib/claim/weight-sets.sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

@Injectable()
class Noop {
  @JobHandler('t')
  async t(): Promise<void> {}
}

/**
 * PostgreSQL stores `groupWeights` past WEIGHTS_IN_CALL_MAX once, as a set named by its content,
 * for the rotation claim to look groups up in (migration 33). That the weights hold in the
 * rotation is fair-share.spec's subject; this is the set's life.
 */
describeDialects(
  'PostgreSQL: stored group weight sets',
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
    });
    afterAll(() => app?.close());
    beforeEach(() => app.rows(`DELETE FROM job_queue_weight_sets`));

    const tenants = (n: number, weight = 2): Record<string, number> => {
      const weights: Record<string, number> = {};
      for (let i = 0; i < n; i++) weights[`tenant-${i}`] = weight + (i % 3);
      return weights;
    };
    const sets = async () =>
      (await app.rows(`SELECT s.id, s.weights, (SELECT count(*) FROM job_queue_group_weights w WHERE w.set_id = s.id) AS stored FROM job_queue_weight_sets s ORDER BY s.id`)).map((r) => [
        String(r.id),
        Number(r.weights),
        Number(r.stored),
      ]);

    it('stores a set once, from processes that start together, and marks it seen again', async () => {
      const weights = tenants(20_000);
      const id = weightSetId(weights);
      // Eight starts at once, as a fleet's rolling restart: one inserts, the others wait on its row.
      await Promise.all(Array.from({ length: 8 }, () => app.db.transaction((tx) => ensureWeightSet(tx, weights))));
      expect(await sets()).toEqual([[id, 20_000, 20_000]]);
      const [{ w }] = await app.rows(`SELECT weight AS w FROM job_queue_group_weights WHERE set_id = $1 AND group_key = 'tenant-4'`, [id]);
      expect(Number(w)).toBe(3);
      await app.rows(`UPDATE job_queue_weight_sets SET seen_at = now() - interval '1 day'`);
      await app.db.transaction((tx) => ensureWeightSet(tx, weights));
      const [{ age }] = await app.rows(`SELECT extract(epoch FROM now() - seen_at) AS age FROM job_queue_weight_sets`);
      expect(Number(age)).toBeLessThan(60);
      expect(await sets()).toEqual([[id, 20_000, 20_000]]);
    });

    it('keeps each version of the options its own set, and deletes a set nobody marked for 30 days', async () => {
      const before = tenants(500);
      const after = { ...tenants(500), 'tenant-7': 9 };
      await app.db.transaction((tx) => ensureWeightSet(tx, before));
      await app.db.transaction((tx) => ensureWeightSet(tx, after));
      expect((await sets()).map(([id]) => id).sort()).toEqual([weightSetId(before), weightSetId(after)].sort());
      // A set last marked 29 days ago stays; one of 31 days is gone, with its weights.
      await app.rows(`UPDATE job_queue_weight_sets SET seen_at = now() - interval '29 days' WHERE id = $1`, [weightSetId(before)]);
      await app.db.transaction((tx) => ensureWeightSet(tx, after));
      expect((await sets()).length).toBe(2);
      await app.rows(`UPDATE job_queue_weight_sets SET seen_at = now() - interval '31 days' WHERE id = $1`, [weightSetId(before)]);
      await app.db.transaction((tx) => ensureWeightSet(tx, after));
      expect(await sets()).toEqual([[weightSetId(after), 500, 500]]);
      expect(Number((await app.rows(`SELECT count(*) AS n FROM job_queue_group_weights`))[0].n)).toBe(500);
    });

    it('stores nothing for a few weights: they travel with the claim', async () => {
      await app.db.transaction((tx) => ensureWeightSet(tx, tenants(WEIGHTS_IN_CALL_MAX)));
      expect(await sets()).toEqual([]);
    });

    it('a worker stores its set at start-up, before its first claim', async () => {
      const weights = tenants(3_000);
      const worker = await startQueueApp(db, { groupWeights: weights }, [Noop]);
      try {
        expect(await sets()).toEqual([[weightSetId(weights), 3_000, 3_000]]);
      } finally {
        await worker.close();
      }
    });
  },
  ['postgres'],
);

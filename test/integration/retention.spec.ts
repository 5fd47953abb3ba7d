import { SweepsService } from '../../lib/sweeps/sweeps.service';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

function agoSql(dialect: string, hours: number): string {
  if (dialect === 'postgres') return `now() - interval '${hours} hours'`;
  if (dialect === 'mysql') return `UTC_TIMESTAMP(3) - INTERVAL ${hours} HOUR`;
  return `strftime('%Y-%m-%d %H:%M:%f', 'now', '-${hours} hours')`;
}

describeDialects('retention sweep', (db) => {
  for (const mode of ['delete', 'archive'] as const) {
    describe(mode, () => {
      let app: QueueApp;
      beforeAll(async () => {
        app = await startQueueApp(db, { worker: false, externalTypes: ['t'], retention: { olderThanMs: 3_600_000, mode, batchSize: 2 } });
      });
      afterAll(() => app?.close());

      it('removes old finished jobs in batches, keeping anything tied to unfinished work', async () => {
        await resetTables(app);
        const ids = await app.queue.enqueueGraph([
          { ref: 'old1', type: 't' },
          { ref: 'old2', type: 't' },
          { ref: 'old3', type: 't' },
          { ref: 'recent', type: 't' },
          { ref: 'up', type: 't' },
          { ref: 'gate', type: 't' },
          { ref: 'down', type: 't', dependsOn: ['up', 'gate'] },
          { ref: 'box', type: 'container' },
          { ref: 'child', type: 't', parent: 'box' },
          { ref: 'sibling', type: 't', parent: 'box' },
        ]);
        const finish = async (refs: string[], state: string, hours: number) =>
          app.rows(`UPDATE jobs SET state = '${state}', finished_at = ${agoSql(db.dialect, hours)}
            WHERE id IN (${refs.map((r) => ids[r as keyof typeof ids]).join(', ')})`);
        await finish(['old1', 'old2', 'up', 'child'], 'done', 48);
        await finish(['old3'], 'failed', 30);
        await finish(['recent'], 'done', 0);
        // 'gate' still ready, so 'down' still waits on it and may read 'up' later; 'box' is open.

        const removed = await app.module.get(SweepsService).retain();
        expect(removed).toBe(3);
        const left = (await app.rows(`SELECT ref FROM jobs ORDER BY id`)).map((r) => r.ref);
        expect(left).toEqual(['recent', 'up', 'gate', 'down', 'box', 'child', 'sibling']);
        expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_deps`))[0].n)).toBe(2);

        if (mode === 'archive') {
          const archived = await app.rows(`SELECT ref, state FROM jobs_archive ORDER BY id`);
          expect(archived.map((r) => [r.ref, r.state])).toEqual([
            ['old1', 'done'],
            ['old2', 'done'],
            ['old3', 'failed'],
          ]);
        } else {
          expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM jobs_archive`))[0].n)).toBe(0);
        }

        // Once the graph and the container have finished, their old rows go too.
        await finish(['gate', 'down', 'sibling', 'box'], 'done', 48);
        expect(await app.module.get(SweepsService).retain()).toBe(6);
        expect((await app.rows(`SELECT ref FROM jobs`)).map((r) => r.ref)).toEqual(['recent']);
        expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_deps`))[0].n)).toBe(0);
      });
    });
  }

  it('validates its options', async () => {
    await expect(startQueueApp(db, { retention: { mode: 'shred' } as never })).rejects.toThrow(/"retention.mode" must be 'delete' or 'archive'/);
  });
});

import { jest } from '@jest/globals';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { Sql } from '../../lib/database/sql';
import { SQLITE_RETENTION_BATCH_BYTES } from '../../lib/sweeps/retention.sql';
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

      if (db.dialect === 'sqlite') {
        // SQLite frees a value by walking its pages, on the event loop and under the write lock:
        // 500 jobs of 1 MB args and results held both for about 3 s in one batch.
        it('SQLite removes large rows in batches of bounded bytes', async () => {
          await resetApp();
          const big = await bigApp();
          try {
            const pad = 'x'.repeat(400_000);
            const ids = Object.values(await big.queue.enqueueGraph(Array.from({ length: 60 }, (_, i) => ({ ref: `b${i}`, type: 't', args: { i, pad } }))));
            await big.rows(`UPDATE jobs SET state = 'done', result = args, finished_at = ${agoSql(db.dialect, 48)}`);
            const sizes = new Map((await big.rows(`SELECT id, octet_length(args) + octet_length(result) AS bytes FROM jobs`)).map((r) => [Number(r.id), Number(r.bytes)]));
            // The statements of the sweep's transactions.
            const database = big.module.get(JobQueueDatabase);
            const transaction = database.transaction.bind(database);
            const statements: Sql[] = [];
            const run = jest.spyOn(database, 'transaction').mockImplementation((work, options) =>
              transaction((tx) => work({ dialect: tx.dialect, run: (s) => (statements.push(s), tx.run(s)) }), options),
            );
            try {
              expect(await big.module.get(SweepsService).retain()).toBe(60);
              const deletes = statements.map((s) => s.render('sqlite')).filter(({ text }) => text.startsWith('DELETE FROM jobs WHERE id IN'));
              const perBatch = deletes.map(({ params }) => params.map((id) => sizes.get(Number(id))!));
              // 48 MB: 8 MB a batch (plus the row that crosses it), not the 60 jobs a batch size of 500 allows.
              expect(perBatch.flat().sort((a, b) => a - b)).toEqual([...sizes.values()].sort((a, b) => a - b));
              for (const batch of perBatch) expect(batch.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(SQLITE_RETENTION_BATCH_BYTES + Math.max(...batch));
              expect(deletes.length).toBeGreaterThanOrEqual(Math.ceil((60 * 800_000) / (SQLITE_RETENTION_BATCH_BYTES + 800_000)));
            } finally {
              run.mockRestore();
            }
            expect(await big.count()).toBe(0);
            if (mode === 'archive') expect(Number((await big.rows(`SELECT COUNT(*) AS n FROM jobs_archive WHERE id IN (${ids.join(', ')})`))[0].n)).toBe(60);
          } finally {
            await big.close();
          }
        }, 60_000);
      }

      async function resetApp(): Promise<void> {
        await resetTables(app);
      }
      function bigApp(): Promise<QueueApp> {
        return startQueueApp(db, { worker: false, externalTypes: ['t'], retention: { olderThanMs: 3_600_000, mode, batchSize: 500 } });
      }
    });
  }

  it('validates its options', async () => {
    await expect(startQueueApp(db, { retention: { mode: 'shred' } as never })).rejects.toThrow(/"retention.mode" must be 'delete' or 'archive'/);
  });
});

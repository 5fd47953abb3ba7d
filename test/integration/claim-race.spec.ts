import type { GraphNode } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

const JOBS = 2_000;
const WORKERS = 4;

describeDialects('claim race between 4 worker processes', (db) => {
  it(`claims each of ${JOBS} jobs exactly once`, async () => {
    const app = await startQueueApp(db, { externalTypes: ['race'] });
    try {
      const nodes: GraphNode[] = Array.from({ length: JOBS }, (_, i) => ({ ref: `r${i}`, type: 'race', priority: i % 3 }));
      const ids = Object.values(await app.queue.enqueueGraph(nodes));

      const workers = Array.from(
        { length: WORKERS },
        // SQLite: a claim that finds the write lock taken gives up at once and the worker tries
        // again, as the others do on their row locks. With the default 100 ms busy wait the first
        // process to start claimed all 2,000 jobs (0.05 ms a claim) while the others waited once.
        (_, i) => new WorkerProcess('claim-race.worker', { ...db.options(), ...(db.dialect === 'sqlite' ? { sqliteBusyTimeoutMs: 0 } : {}), externalTypes: ['race'], owner: `proc-${i}`, batch: 5 }),
      );
      await Promise.all(workers.map((w) => w.waitFor('ready')));
      workers.forEach((w) => w.send('go'));
      const reports = await Promise.all(workers.map((w) => w.waitFor('done', 120_000)));

      const all = reports.flatMap((r) => r.ids as number[]);
      expect(all).toHaveLength(JOBS); // nobody claimed a row twice...
      expect(new Set(all)).toEqual(new Set(ids)); // ...and every row was claimed
      expect(await app.count(`state = 'ready'`)).toBe(0);

      // The database agrees with each process's own account.
      const rows = await app.rows(`SELECT id, lease_owner, attempts, state FROM jobs`);
      const ownerOf = new Map(reports.flatMap((r) => (r.ids as number[]).map((id) => [id, r.owner])));
      for (const row of rows) {
        expect(row.state).toBe('leased');
        expect(Number(row.attempts)).toBe(1);
        expect(row.lease_owner).toBe(ownerOf.get(Number(row.id)));
      }
      const split = reports.map((r) => `${r.owner}=${(r.ids as number[]).length}/${r.claims} claims`).join(' ');
      process.stdout.write(`[${db.dialect}] claim race: ${split}\n`);
      expect(reports.filter((r) => (r.ids as number[]).length > 0).length).toBeGreaterThanOrEqual(2);
      await Promise.all(workers.map((w) => w.exited));
    } finally {
      await app.close();
    }
  });
});

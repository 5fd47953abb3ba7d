import { JOB_QUEUE_OPTIONS } from '../../lib/job-queue.constants';
import type { ResolvedJobQueueOptions } from '../../lib/job-queue.options';
import { sql } from '../../lib/database/sql';
import { FinalizeService } from '../../lib/finalize/finalize.service';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * One finalize batch in which some jobs are still this worker's and some lost their lease (a
 * sweep handed one to another worker, another was cancelled). On MySQL the complete first
 * guards by count, without reading (see completeJobs); a batch the guard turned partly down is
 * rolled back and written again with the locking read. Either way: the owned jobs are done, the
 * others untouched, and only the done jobs' dependents are promoted, once.
 */
describeDialects('finalize of a batch with lost leases among it', (db) => {
  let app: QueueApp;
  let finalizer: FinalizeService;
  let owner: string;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['noop'] });
    finalizer = app.module.get(FinalizeService);
    owner = app.module.get<ResolvedJobQueueOptions>(JOB_QUEUE_OPTIONS).workerId;
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  async function running(ids: number[], by: string): Promise<void> {
    const d = app.db.dialect;
    await app.db.run(
      sql`UPDATE jobs SET state = 'running', lease_owner = ${by}, lease_expires = ${d.addMs(d.now(), 600_000)}, attempts = 1 WHERE id IN (${sql.list(ids)})`,
    );
  }

  it.each([
    ['none', []],
    ['the first', [0]],
    ['a middle one', [2]],
    ['two of five', [1, 3]],
    ['all five', [0, 1, 2, 3, 4]],
  ] as [string, number[]][])('%s lost: the rest complete, the lost stay as they were, dependents of the done only', async (_, lostAt) => {
    const refs = ['a', 'b', 'c', 'd', 'e'];
    const ids = await app.queue.enqueueGraph([
      ...refs.map((ref) => ({ ref, type: 'noop' })),
      ...refs.map((ref) => ({ ref: `after-${ref}`, type: 'noop', dependsOn: [ref] })),
    ]);
    const batch = refs.map((r) => ids[r]);
    await running(batch, owner);
    const lost = lostAt.map((i) => batch[i]);
    // One lost to another worker's reclaim, the rest cancelled under it.
    if (lost.length) await running(lost.slice(0, 1), 'another-worker');
    if (lost.length > 1) await app.rows(`UPDATE jobs SET state = 'cancelled', lease_owner = NULL WHERE id IN (${lost.slice(1).join(', ')})`);

    // Handed in within one turn: one batch, one transaction.
    const results = await Promise.all(batch.map((id) => finalizer.complete(id, JSON.stringify({ id }), null)));

    expect(results).toEqual(batch.map((id) => (lost.includes(id) ? 'lost' : 'done')));
    const rows = await app.rows(`SELECT id, state, lease_owner, result FROM jobs`);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    for (const [i, id] of batch.entries()) {
      const row = byId.get(id)!;
      if (!lost.includes(id)) expect(row).toMatchObject({ state: 'done', lease_owner: null, result: JSON.stringify({ id }) });
      else if (id === lost[0]) expect(row).toMatchObject({ state: 'running', lease_owner: 'another-worker', result: null });
      else expect(row).toMatchObject({ state: 'cancelled', result: null });
      const after = byId.get(ids[`after-${refs[i]}`])!;
      expect({ ref: `after-${refs[i]}`, state: after.state }).toEqual({ ref: `after-${refs[i]}`, state: lost.includes(id) ? 'waiting' : 'ready' });
    }
    const pending = await app.rows(`SELECT pending_deps FROM jobs WHERE id IN (${refs.map((r) => ids[`after-${r}`]).join(', ')}) ORDER BY id`);
    expect(pending.map((r) => Number(r.pending_deps))).toEqual(batch.map((id) => (lost.includes(id) ? 1 : 0)));
  });
});

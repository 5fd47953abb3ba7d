import { ClaimService, JobQueueModule, type JobQueueModuleOptions } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { sql } from '../../lib/database/sql';
import { bootContext, runWorker, send, waitForGo, workerOptions } from './worker-harness';

/** Claims `race` jobs in small batches until none is ready, then reports every id it got. */
runWorker(async () => {
  const options = workerOptions<JobQueueModuleOptions & { batch: number; owner: string }>();
  const { batch, owner, ...moduleOptions } = options;
  const app = await bootContext(JobQueueModule.forRoot({ ...moduleOptions, worker: false }));
  const claim = app.get(ClaimService);
  const db = app.get(JobQueueDatabase);
  // Warm up first (connection, first transaction, statement preparation): otherwise the process
  // that happens to finish this first can drain every job before the others claim at all.
  await claim.claim({ owner, types: ['warm-up'], quotas: [{ limit: 1 }], leaseTtlMs: 1_000 });
  send({ type: 'ready' });
  await waitForGo();

  const ids: number[] = [];
  let claims = 0;
  for (;;) {
    const jobs = await claim.claim({ owner, types: ['race'], quotas: [{ limit: batch }], leaseTtlMs: 600_000 });
    claims++;
    ids.push(...jobs.map((j) => j.id));
    if (jobs.length) continue;
    // Empty: either the table is drained, or (SQLite) another process held the write lock.
    const { rows } = await db.run(sql`SELECT COUNT(*) AS n FROM jobs WHERE state = 'ready'`);
    if (Number(rows[0].n) === 0) break;
  }
  send({ type: 'done', owner, ids, claims });
  await app.close();
});

import { sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { failAttempts } from '../../lib/finalize/fail.sql';
import { ownedBy } from '../../lib/lease/lease-guard.sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const JOBS = 1_200;

/**
 * failAttempts wrote one UPDATE per failed job: a worker's batch of failures (thousands of jobs
 * timing out at once) cost a round trip each, 10,000 failing jobs 3.9 s on PostgreSQL and 3.5 s
 * on MariaDB against 0.6-0.9 s for as many completions (`.scratch/fail-rate.cjs`). Now a
 * statement per slice of 500, each job still getting its own error text, delay and outcome.
 */
describeDialects('failAttempts of a large batch', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['f'] });
  });
  afterAll(() => app.close());

  it(`${JOBS} failures: a few statements, each job its own text, delay and outcome; other owners' jobs untouched`, async () => {
    const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: JOBS }, (_, i) => ({ ref: `j${i}`, type: 'f', maxAttempts: 3 }))));
    // Running for worker 'me', on attempt 1 or (every third) their last; every tenth belongs to someone else.
    await app.db.run(sql`UPDATE jobs SET state = 'running', lease_owner = 'me', attempts = 1, lease_expires = ${app.db.dialect.now()}`);
    await app.db.run(sql`UPDATE jobs SET attempts = 3 WHERE id % 3 = 0`);
    await app.db.run(sql`UPDATE jobs SET lease_owner = 'other' WHERE id % 10 = 0`);
    const items = ids.map((id) => ({ id, error: `it's job ${id}'s error -- ${'x'.repeat(id % 7)}`, retryDelayMs: id % 2 ? 3_600_000 : 0, final: id % 5 === 0 }));

    let statements = 0;
    const outcome = await app.db.transaction((tx) => {
      const counted: SqlExecutor = { dialect: tx.dialect, run: (s) => (statements++, tx.run(s)) };
      return failAttempts(counted, items, ownedBy(tx.dialect, 'me'));
    });

    const mine = ids.filter((id) => id % 10 !== 0);
    const retried = mine.filter((id) => id % 3 !== 0 && id % 5 !== 0);
    expect(outcome.retried).toEqual(retried);
    expect(outcome.failed.map((s) => s.id)).toEqual(mine.filter((id) => !retried.includes(id)));
    const rows = await app.rows(`SELECT id, state, last_error, lease_owner, ${db.dialect === 'postgres' ? 'run_after > now() + interval \'30 minutes\'' : db.dialect === 'mysql' ? 'run_after > UTC_TIMESTAMP(3) + INTERVAL 30 MINUTE' : "run_after > strftime('%Y-%m-%d %H:%M:%f', 'now', '+30 minutes')"} AS later FROM jobs ORDER BY id`);
    for (const r of rows) {
      const id = Number(r.id);
      if (id % 10 === 0) {
        expect([id, r.state, r.last_error, r.lease_owner]).toEqual([id, 'running', null, 'other']);
        continue;
      }
      const state = retried.includes(id) ? 'ready' : 'failed';
      expect([id, r.state, r.last_error, r.lease_owner]).toEqual([id, state, items.find((i) => i.id === id)!.error, null]);
      if (state === 'ready') expect([id, Number(r.later) === 1]).toEqual([id, id % 2 === 1]);
    }
    // Each job written has its error line, copied from its row (none for the other owner's jobs).
    const lines = await app.rows(`SELECT job_id, attempt, message FROM job_logs WHERE level = 'error' ORDER BY job_id`);
    expect(lines.map((l) => [Number(l.job_id), Number(l.attempt), l.message])).toEqual(mine.map((id) => [id, id % 3 === 0 ? 3 : 1, items.find((i) => i.id === id)!.error]));
    // Before: one per job (1,080), twice that on MySQL (a locking read before each). Now per slice
    // of 500: the UPDATE (MySQL: a locking read and the UPDATE) and the error lines' INSERT.
    expect(statements).toBeLessThanOrEqual(db.dialect === 'mysql' ? 9 : 6);
  });
});

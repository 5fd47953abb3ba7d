import { jest } from '@jest/globals';
import { DashboardService, MAX_FIELD_CHARS } from '../../lib/dashboard/dashboard.service';
import type { ResolvedDashboardOptions } from '../../lib/dashboard/dashboard.options';
import type { SqlResult } from '../../lib/database/sql-executor';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * The job page polls its job every 2 s and shows 64 KiB of args, result and error. It read the
 * whole row: a 16 MB result on PostgreSQL was 17 MB and 200 ms a refresh (30 ms now,
 * .scratch/job-page.cjs), and results may be 256 MB. Counted here as the bytes the database
 * returns, whatever the machine's speed.
 */
describeDialects("the dashboard's job page", (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['big'] });
  });
  afterAll(() => app?.close());

  it('reads large args and results only as far as it shows them; small ones as indented JSON', async () => {
    const blob = '😀'.repeat(200_000); // 800 KB, 200,000 characters
    const job = await app.queue.enqueue({ type: 'big', args: { blob, n: 1 } });
    const small = await app.queue.enqueue({ type: 'big', args: { n: 2, tags: ['a'] } });
    const result = JSON.stringify({ ok: true, text: 'r'.repeat(3_000_000) });
    await app.rows(
      db.dialect === 'postgres' ? `UPDATE jobs SET result = $1, last_error = $2 WHERE id = $3` : `UPDATE jobs SET result = ?, last_error = ? WHERE id = ?`,
      [result, 'e'.repeat(8_000), job.id],
    );
    const dashboard = new DashboardService({ readOnly: false, snapshotTtlMs: 0 } as ResolvedDashboardOptions, app.queue, app.db);
    let bytes = 0;
    const run = jest.spyOn(app.db, 'run');
    let view: Record<string, any> | null;
    try {
      view = await dashboard.job(job.id);
      for (const r of run.mock.results) for (const row of (await (r.value as Promise<SqlResult>)).rows) bytes += JSON.stringify(row).length;
    } finally {
      run.mockRestore();
    }
    expect(bytes).toBeLessThan(500_000);
    const stored = JSON.stringify({ blob, n: 1 });
    expect(view!.args).toEqual({ text: `${stored.slice(0, 2 * MAX_FIELD_CHARS - 9)}… [truncated]`, truncated: true, length: stored.length - blob.length / 2 });
    expect(view!.result).toEqual({ text: `${result.slice(0, MAX_FIELD_CHARS)}… [truncated]`, truncated: true, length: result.length });
    expect(view!.error).toEqual({ text: 'e'.repeat(8_000), truncated: false, length: 8_000 });
    expect(view).toMatchObject({ id: job.id, type: 'big', state: 'ready', group: 'default', attempts: 0, parentId: null, stage: null });
    // What fits is shown whole, parsed and indented, as before.
    const pretty = JSON.stringify({ n: 2, tags: ['a'] }, null, 2);
    expect(await dashboard.job(small.id)).toMatchObject({ id: small.id, args: { text: pretty, truncated: false, length: pretty.length }, result: null, error: null });
    expect(await dashboard.job(small.id + 1_000)).toBeNull();
  });

  // PostgreSQL's args index refuses text that is not JSON; MariaDB and SQLite can hold it.
  if (db.dialect !== 'postgres') {
    it('shows args that are not JSON (a row written by hand) as their text', async () => {
      const job = await app.queue.enqueue({ type: 'big', args: { n: 3 } });
      await app.rows(`UPDATE jobs SET args = '{"n": 3, not json' WHERE id = ${job.id}`);
      const dashboard = new DashboardService({ readOnly: false, snapshotTtlMs: 0 } as ResolvedDashboardOptions, app.queue, app.db);
      const shown = JSON.stringify('{"n": 3, not json', null, 2);
      expect(await dashboard.job(job.id)).toMatchObject({ id: job.id, args: { text: shown, truncated: false } });
    });
  }
});

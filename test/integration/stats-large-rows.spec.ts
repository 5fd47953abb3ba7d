import { sql, type Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { readRecentFinished, SQLITE_RECENT_SLICE_BYTES } from '../../lib/stats/recent-finished.sql';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * stats() counts the jobs finished in its window from their rows. A SQLite row stores `state`
 * and the times after the args and result, so reading them walks those values: on SQLite the
 * window is read in slices of bounded bytes, each a statement on the event loop.
 */
describeDialects('stats() over finished jobs with large args and results', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['big'] });
  });
  afterAll(() => app?.close());

  it('counts them exactly; SQLite reads at most its byte budget per slice', async () => {
    await resetTables(app);
    const pad = 'x'.repeat(300_000);
    const ids: number[] = [];
    for (let from = 0; from < 60; from += 20) {
      const refs = await app.queue.enqueueGraph(Array.from({ length: 20 }, (_, i) => ({ ref: `b${i}`, type: 'big', args: { i: from + i, pad } })));
      ids.push(...Object.values(refs));
    }
    const d = app.db.dialect;
    // 45 done in 2 s each, 15 failed; 36 MB of args and results in all.
    await app.db.run(sql`UPDATE jobs SET state = 'done', result = args, started_at = ${d.addMs(d.now(), -2_000)}, finished_at = ${d.now()} WHERE id IN (${sql.list(ids.slice(0, 45))})`);
    await app.db.run(sql`UPDATE jobs SET state = 'failed', started_at = ${d.addMs(d.now(), -2_000)}, finished_at = ${d.now()} WHERE id IN (${sql.list(ids.slice(45))})`);

    const statements: Sql[] = [];
    const recording: SqlExecutor = { dialect: d, run: (s) => (statements.push(s), app.db.run(s)) };
    expect(await readRecentFinished(recording, 60_000)).toEqual({ done: 45, failed: 15, meanDurationMs: 2_000 });
    if (db.dialect !== 'sqlite') return;
    // The slices: each takes the rows its sizing statement fitted, at most the budget plus one row.
    const limits = statements.map((s) => s.render('sqlite')).filter(({ text }) => text.startsWith('WITH t AS MATERIALIZED')).map(({ params }) => Number(params[params.length - 1]));
    expect(limits.reduce((a, b) => a + b, 0)).toBe(60);
    const row = (n: number) => (n < 45 ? 600_000 : 300_000) + 40; // args (and the result of a done one), JSON included
    let at = 0;
    for (const limit of limits) {
      const bytes = Array.from({ length: limit }, (_, k) => row(at + k)).reduce((a, b) => a + b, 0);
      expect(bytes).toBeLessThanOrEqual(SQLITE_RECENT_SLICE_BYTES + 600_100);
      at += limit;
    }
    expect(limits.length).toBeGreaterThanOrEqual(2);
  });
});

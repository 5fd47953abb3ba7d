import { sql } from '../../lib/database/sql';
import { selectJobStates, selectSettledAmong } from '../../lib/waiters/waiters.sql';
import { describeDialects } from '../support/describe-dialects';
import { explainText } from '../support/plan-reads';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * The waiters' poll asks which pending jobs settled or are gone, every poll interval, for every
 * pending id. A SQLite row stores `state` after the args, so reading it walks their overflow
 * pages: 10,000 waiters on jobs with 100 KB args cost 180 ms of the event loop per poll.
 */
describeDialects('waitFor poll over jobs with large args', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['w'] });
  });
  afterAll(() => app?.close());

  it('finds the settled and the removed jobs among the pending ones', async () => {
    await resetTables(app);
    const pad = 'x'.repeat(100_000);
    const refs = await app.queue.enqueueGraph(Array.from({ length: 40 }, (_, i) => ({ ref: `j${i}`, type: 'w', args: { i, pad } })));
    const ids = Array.from({ length: 40 }, (_, i) => refs[`j${i}`]);
    const set = (state: string, from: number, to: number) => app.db.run(sql`UPDATE jobs SET state = ${state} WHERE id IN (${sql.list(ids.slice(from, to))})`);
    await set('done', 0, 5);
    await set('failed', 5, 8);
    await set('cancelled', 8, 10);
    await set('running', 10, 15);
    await set('waiting', 15, 20);
    await app.db.run(sql`DELETE FROM jobs WHERE id IN (${sql.list(ids.slice(20, 23))})`);
    const never = Math.max(...ids) + 1_000;

    const polled = await selectSettledAmong(app.db, [...ids, never]);
    expect(polled.settled.map((s) => s.id).sort((a, b) => a - b)).toEqual(ids.slice(0, 10));
    // Their sizes, for the reads that follow: args of 100 KB, no result.
    for (const s of polled.settled) expect(s.bytes).toBeGreaterThan(100_000);
    expect(polled.missing.sort((a, b) => a - b)).toEqual([...ids.slice(20, 23), never]);
    expect(await selectSettledAmong(app.db, ids.slice(23))).toEqual({ settled: [], missing: [] });

    // A new watch's first lookup: every job that exists, sized when settled.
    const states = new Map((await selectJobStates(app.db, [...ids, never])).map((r) => [r.id, r]));
    expect(states.size).toBe(37);
    for (const [i, id] of ids.entries()) {
      const want = i < 5 ? 'done' : i < 8 ? 'failed' : i < 10 ? 'cancelled' : i < 15 ? 'running' : i < 20 ? 'waiting' : i < 23 ? undefined : 'ready';
      expect(states.get(id)?.state).toBe(want);
      if (want) expect(states.get(id)!.bytes > 100_000).toBe(i < 10);
    }
  });

  if (db.dialect === 'sqlite') {
    it('SQLite answers from the (state, id) index and primary-key probes, never reading a job row', async () => {
      // The statement as the poll builds it, through a recording executor.
      let statement: Parameters<QueueApp['db']['run']>[0] | undefined;
      await selectSettledAmong({ dialect: app.db.dialect, run: async (s) => ((statement = s), { rows: [], affected: 0 }) }, [1, 2, 3]);
      const plan = await explainText(app, 'EXPLAIN QUERY PLAN', statement!);
      expect(plan).toContain('COVERING INDEX jobs_state_id_idx');
      expect(plan).not.toMatch(/LEFT-JOIN/);
      // The first lookup likewise; only settled jobs are probed again, for their sizes.
      await selectJobStates({ dialect: app.db.dialect, run: async (s) => ((statement = s), { rows: [], affected: 0 }) }, [1, 2, 3]);
      const lookup = await explainText(app, 'EXPLAIN QUERY PLAN', statement!);
      expect(lookup).toMatch(/SEARCH s USING COVERING INDEX jobs_state_id_idx \(state=\? AND id=\?\)/);
    });
  }
});

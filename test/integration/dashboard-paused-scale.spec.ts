import { jest } from '@jest/globals';
import type { Sql } from '../../lib/database/sql';
import { DashboardService } from '../../lib/dashboard/dashboard.service';
import type { ResolvedDashboardOptions } from '../../lib/dashboard/dashboard.options';
import { describeDialects } from '../support/describe-dialects';
import { insertPausedGroups } from '../support/number-rows';
import { explainText, mysqlRowsRead } from '../support/plan-reads';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const ENTRIES = 100_000;
const PREVIEW = 200;

/**
 * The overview (every second) and every pause/resume answer read what is paused. Its first 200
 * entries and their count came from one statement whose `COUNT(*) OVER ()` sorted every entry
 * before the limit: with 400,000 paused groups 686 ms a refresh on MariaDB and 133 ms of
 * SQLite's event loop (.scratch/paused-preview.cjs). What the fix changed is shown by what the
 * server does, not by a clock: no statement sorts or materializes the entries, and the preview
 * reads its own 200 rows. (The count reads them all: SQLite and InnoDB keep no row count.)
 */
describeDialects(
  "the dashboard's paused preview at 100,000 paused groups",
  (db) => {
    let app: QueueApp;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      await insertPausedGroups(app, ENTRIES);
    }, 60_000);
    afterAll(() => app?.close());

    /** The statements paused() runs, and its answer. */
    async function readPaused(): Promise<{ view: Awaited<ReturnType<DashboardService['paused']>>; statements: Sql[] }> {
      const dashboard = new DashboardService({ readOnly: false, snapshotTtlMs: 0 } as ResolvedDashboardOptions, app.queue, app.db);
      const run = jest.spyOn(app.db, 'run');
      try {
        const view = await dashboard.paused();
        return { view, statements: run.mock.calls.map(([s]) => s) };
      } finally {
        run.mockRestore();
      }
    }

    it('reads the first 200 entries in index order, and counts them without a sort', async () => {
      const { view, statements } = await readPaused();
      expect([view.paused.length, view.pausedCount, view.paused[0]]).toEqual([PREVIEW, ENTRIES, { group: 'tenant-1' }]);
      expect(statements).toHaveLength(2); // the preview, then the count (only when the preview is full)
      for (const statement of statements) {
        const plan = await explainText(app, db.dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN', statement);
        expect(plan).not.toMatch(/TEMP B-TREE|filesort|temporary/i);
      }
      if (db.dialect === 'mysql') {
        const { result, read } = await mysqlRowsRead(app, (tx) => tx.run(statements[0]));
        expect(result.rows).toHaveLength(PREVIEW);
        expect(read).toBeLessThanOrEqual(2 * (PREVIEW + 1));
      }
    }, 60_000);
  },
  ['sqlite', 'mysql'],
);

import { jest } from '@jest/globals';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { describeDialects } from '../support/describe-dialects';
import { textChars } from '../support/text-chars';
import { startQueueApp } from '../support/queue-app';

const NODES = 100;
const ARGS_CHARS = 1_000_000;
/** Characters of args in one insert statement at most (PostgreSQL's unnest statements), and one job more. */
const MAX_STATEMENT_CHARS = 64 * 1024 * 1024 + ARGS_CHARS + 1_000;

/**
 * PostgreSQL inserted a graph's jobs 10,000 per statement, whatever their args, and the driver
 * writes an array parameter as one string: 600 jobs of 1 MB args (each within the default
 * maxArgsBytes) passed V8's longest string and enqueueGraph failed with a RangeError
 * ("Invalid string length", `.scratch/enq-big.cjs`), where MySQL and SQLite, chunked by bytes,
 * took them. Its statements are now cut at 64 MB of args too.
 */
describeDialects('enqueueGraph of jobs with large args', (db) => {
  it(`${NODES} jobs of 1 MB args: every job inserted, no statement past 64 MB of them`, async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['big'] });
    try {
      let largest = 0;
      const transaction = app.db.transaction.bind(app.db);
      jest.spyOn(app.db, 'transaction').mockImplementation((work, options) =>
        transaction(async (tx) => {
          const weighed: SqlExecutor = { dialect: tx.dialect, run: (s) => ((largest = Math.max(largest, textChars(s))), tx.run(s)) };
          return work(weighed);
        }, options) as never,
      );
      const pad = 'x'.repeat(ARGS_CHARS - 20);
      const ids = await app.queue.enqueueGraph(Array.from({ length: NODES }, (_, i) => ({ ref: `r${i}`, type: 'big', args: { pad, i } })));
      expect(Object.keys(ids)).toHaveLength(NODES);
      expect(await app.count(`type = 'big'`)).toBe(NODES);
      // Before, on PostgreSQL: one statement of 100 MB.
      expect(largest).toBeLessThanOrEqual(MAX_STATEMENT_CHARS);
    } finally {
      await app.close();
    }
  }, 120_000);
});

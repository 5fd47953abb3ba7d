import { SQLITE_TEXT_KEPT } from '../../lib/database/sqlite-statements';
import { describeDialects } from '../support/describe-dialects';
import { WorkerProcess } from '../support/worker-process';

/** Graphs of every size from 1 to SIZES: 45,150 jobs and 44,850 edges. */
const SIZES = 300;
const MB = 1024 * 1024;

describeDialects(`memory: graphs of ${SIZES} different sizes`, (db) => {
  it('keeps the heap flat: statements that follow the batch size do not pile up', async () => {
    const worker = new WorkerProcess('batch-sizes.worker', { ...db.options(), sizes: SIZES }, {}, ['--expose-gc']);
    try {
      const result = (await worker.waitFor('result', 120_000)) as unknown as {
        before: { heap: number; rss: number };
        after: { heap: number; rss: number };
        statements: { shapes: number; shapeChars: number; shapeNodes: number; texts: number; textChars: number } | null;
      };
      const heap = result.after.heap - result.before.heap;
      const rss = result.after.rss - result.before.rss;
      process.stdout.write(
        `[${db.dialect}] ${SIZES} graph sizes: heap after GC +${(heap / MB).toFixed(1)} MB, RSS +${(rss / MB).toFixed(0)} MB; statements ${JSON.stringify(result.statements)}\n`,
      );
      // SQLite before the fix: heap +36 MB (a trie branch of up to 256 nodes per long statement,
      // 509 long texts kept, 3.7 million characters) and RSS +147 MB (a compiled statement per
      // size, 1.6 MB of native memory at 1,000 rows). After: +0.3 MB and +30 MB.
      expect(heap).toBeLessThan(6 * MB);
      if (db.dialect === 'sqlite') {
        expect(rss).toBeLessThan(100 * MB);
        expect(result.statements!.textChars).toBeLessThanOrEqual(SQLITE_TEXT_KEPT);
        expect(result.statements!.shapes).toBeLessThan(200);
        expect(result.statements!.shapeNodes).toBeLessThan(20 * result.statements!.shapes + 1_000);
      }
    } finally {
      worker.kill();
      await worker.exited;
    }
  });
});

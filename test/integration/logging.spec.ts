import { jest } from '@jest/globals';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';

describeDialects('the logging option', (db) => {
  it("shows the queue's own statements through TypeORM's logger", async () => {
    const lines: string[] = [];
    const spy = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(stripColors(args.join(' '))));
    const app = await startQueueApp(db, { logging: true, worker: false, externalTypes: ['t'] }).catch((err) => {
      spy.mockRestore();
      throw err;
    });
    try {
      await app.queue.enqueue({ type: 't' });
      await app.queue.stats();
    } finally {
      spy.mockRestore();
      await app.close();
    }
    // PostgreSQL runs these on pooled clients outside TypeORM's QueryRunner; they must still show.
    expect(lines.some((l) => /job_queue_enqueue_one|INSERT INTO jobs/.test(l))).toBe(true);
    expect(lines.some((l) => /FROM jobs/.test(l))).toBe(true);
  });
});

/** TypeORM highlights SQL when it thinks the terminal has colors (CI=true is one such hint). */
function stripColors(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

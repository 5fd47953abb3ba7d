import { Injectable } from '@nestjs/common';
import { JobContext, JobHandler, type GraphNode } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

const started: Array<{ group: string; at: number }> = [];

@Injectable()
class FairHandlers {
  @JobHandler('work')
  async work(args: { ms: number }, ctx: JobContext): Promise<void> {
    started.push({ group: ctx.group, at: Date.now() });
    await new Promise((r) => setTimeout(r, args.ms));
  }
}

describeDialects('weighted fair share', (db) => {
  let app: QueueApp;

  beforeEach(() => {
    started.length = 0;
  });
  afterEach(async () => {
    await app?.close();
  });

  it('holds a 3:1 slot share between weights 3 and 1 under a saturated backlog (concurrency 4)', async () => {
    app = await startQueueApp(db, { worker: false }, [FairHandlers]);
    await resetTables(app);
    const nodes: GraphNode[] = [];
    for (let i = 0; i < 300; i++) {
      nodes.push({ ref: `a${i}`, type: 'work', group: 'a', weight: 3, args: { ms: 25 } });
      nodes.push({ ref: `b${i}`, type: 'work', group: 'b', weight: 1, args: { ms: 25 } });
    }
    await app.queue.enqueueGraph(nodes);
    await app.close();

    app = await startQueueApp(db, { concurrency: 4, pollIntervalMs: 50 }, [FairHandlers]);
    await eventually('200 jobs started', async () => started.length >= 200);
    const window = started.slice(20, 200); // skip warm-up; both groups still have a backlog
    const a = window.filter((s) => s.group === 'a').length;
    const b = window.filter((s) => s.group === 'b').length;
    process.stdout.write(`[${db.dialect}] fair share 3:1 → a=${a} b=${b} ratio=${(a / b).toFixed(2)}\n`);
    expect(a / b).toBeGreaterThan(3 * 0.85);
    expect(a / b).toBeLessThan(3 * 1.15);
  });

  it('starts a one-job group promptly behind a 10,000-job group', async () => {
    app = await startQueueApp(db, { concurrency: 4, pollIntervalMs: 50 }, [FairHandlers]);
    await resetTables(app);
    await app.queue.enqueueGraph(Array.from({ length: 10_000 }, (_, i) => ({ ref: `big${i}`, type: 'work', group: 'big', args: { ms: 10 } })));
    await eventually('big group running', async () => started.length >= 20);
    const small = await app.queue.enqueue({ type: 'work', group: 'small', args: { ms: 10 } });
    const t0 = Date.now();
    const done = await app.queue.waitFor(small.id, { timeoutMs: 10_000 });
    const waited = Date.now() - t0;
    const bigDone = await app.count(`group_key = 'big' AND state = 'done'`);
    process.stdout.write(`[${db.dialect}] small group's job finished ${waited} ms after enqueue; big group: ${bigDone}/10000 done\n`);
    expect(done.state).toBe('done');
    expect(bigDone).toBeLessThan(5_000); // the small job did not wait for the big backlog
    expect(waited).toBeLessThan(2_000);
  });
});

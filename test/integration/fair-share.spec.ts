import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { JobContext, JobHandler, type GraphNode } from '../../lib';
import { WEIGHTS_IN_CALL_MAX, weightSetId } from '../../lib/claim/weight-sets.sql';
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

  it.each([
    ['a few', 0],
    ['12,000 tenants of', 12_000],
  ])('weights from the options (%s groupWeights) hold in the rotation: a group weighted 3 among five of weight 1 gets 3 slots in 8', async (_label, tenants) => {
    app = await startQueueApp(db, { worker: false }, [FairHandlers]);
    await resetTables(app);
    const groups = ['a', 'b', 'c', 'd', 'e', 'f'];
    const nodes: GraphNode[] = [];
    for (let i = 0; i < 150; i++) for (const g of groups) nodes.push({ ref: `${g}${i}`, type: 'work', group: g, args: { ms: 20 } }); // stored weight 1
    await app.queue.enqueueGraph(nodes);
    await app.close();

    // Six ready groups, four slots: the rotation; `a`'s weight comes from the options alone.
    const groupWeights: Record<string, number> = { a: 3 };
    for (let i = 0; i < tenants; i++) groupWeights[`tenant-${i}`] = 2;
    app = await startQueueApp(db, { concurrency: 4, pollIntervalMs: 50, groupWeights }, [FairHandlers]);
    const run = jest.spyOn(app.db, 'run');
    try {
      await eventually('330 jobs started', async () => started.length >= 330);
      const window = started.slice(30, 330);
      const share = window.filter((s) => s.group === 'a').length / window.length;
      process.stdout.write(`[${db.dialect}] option weights, ${tenants} tenants: a's share ${share.toFixed(3)} (3/8 = 0.375)\n`);
      expect(share).toBeGreaterThan(0.3);
      expect(share).toBeLessThan(0.45);
      if (db.dialect === 'postgres') {
        // One call of the rotation claim either way: past WEIGHTS_IN_CALL_MAX it names the stored
        // set instead of carrying every weight, and the set holds them all.
        const calls = run.mock.calls.map(([statement]) => statement.render(db.dialect)).filter((r) => /job_queue_claim_rotation/.test(r.text));
        expect(calls.length).toBeGreaterThan(0);
        const setId = tenants > WEIGHTS_IN_CALL_MAX ? weightSetId(groupWeights) : null;
        expect(calls.every((c) => c.params.includes(setId))).toBe(true);
        if (setId) {
          const [set] = await app.rows(`SELECT weights, (SELECT count(*) FROM job_queue_group_weights w WHERE w.set_id = s.id) AS stored FROM job_queue_weight_sets s WHERE id = '${setId}'`);
          expect([Number(set.weights), Number(set.stored)]).toEqual([tenants + 1, tenants + 1]);
        }
      }
    } finally {
      run.mockRestore();
    }
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

import { Injectable } from '@nestjs/common';
import { JobHandler, type GraphNode } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { clearProbes, finalizeCounts, installProbes } from '../support/probe-tables';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

/**
 * Graphs wider than every dialect's bind limit (SQLite 32,766 variables): a node with 40,000
 * dependents and a node with 40,000 dependencies. A statement that binds one parameter per
 * dependent fails on every finalize of the root, which then re-runs until its attempts are
 * spent and the whole valid graph is cancelled.
 */
const WIDTH = Number(process.env.LARGE_GRAPH_WIDTH ?? 40_000);
let gateOpen = false;

@Injectable()
class Handlers {
  @JobHandler('noop')
  async noop(): Promise<null> {
    return null;
  }

  @JobHandler('gate', { maxAttempts: 1 })
  async gate(): Promise<string> {
    if (!gateOpen) throw new Error('gate closed');
    return 'open';
  }
}

/** 1 → WIDTH → 1: the root fans out to WIDTH jobs, which all fan in to one sink. */
function diamond(rootType: string): GraphNode[] {
  const nodes: GraphNode[] = [{ ref: 'root', type: rootType }];
  const mids: string[] = [];
  for (let i = 0; i < WIDTH; i++) {
    mids.push(`m${i}`);
    nodes.push({ ref: `m${i}`, type: 'noop', dependsOn: ['root'] });
  }
  nodes.push({ ref: 'sink', type: 'noop', dependsOn: mids });
  return nodes;
}

/** Generous: a shared 2-core machine runs a few hundred to a few thousand no-op jobs a second. */
const timeoutMs = Math.max(60_000, WIDTH * 10);

describeDialects(`graphs wider than the bind limit (${WIDTH.toLocaleString('en')})`, (db) => {
  let app: QueueApp;

  beforeAll(async () => {
    // Claims and finalizes of 500 bind more parameters per statement than the defaults' 50 (the
    // limit this spec is about) and take the 120,000 jobs per dialect through in half the time.
    app = await startQueueApp(db, { concurrency: 50, prefetch: 500, pollIntervalMs: 100, retryBackoff: { baseMs: 20, maxMs: 100 } }, [Handlers]);
    await installProbes(app);
  });
  afterAll(() => app?.close());
  beforeEach(async () => {
    await resetTables(app);
    await clearProbes(app);
  });

  // One graph for the fan-out, the fan-in, the cascade and the retry: running a second 1 → WIDTH
  // → 1 whose root succeeds at once took the same promotion and fan-in paths as the retried one
  // does below, for a third of this file's time.
  it(`1 → ${WIDTH} → 1 whose root fails: cancels the ${WIDTH + 1} dependents; retry() runs the fan-out and fan-in to done, each job finalized once`, async () => {
    gateOpen = false;
    const nodes = diamond('gate');
    const started = Date.now();
    const ids = await app.queue.enqueueGraph(nodes);
    process.stdout.write(`[${db.dialect}] 1 → ${WIDTH} → 1: enqueue ${Date.now() - started} ms\n`);
    expect(await app.queue.waitFor(ids.root, { timeoutMs })).toMatchObject({ state: 'failed' });
    await eventually('the cascade', async () => (await app.queue.get(ids.sink))?.state === 'cancelled', timeoutMs);
    expect(await app.count(`state = 'cancelled'`)).toBe(WIDTH + 1);
    expect((await app.queue.get(ids.m0))!.lastError).toMatch(new RegExp(`upstream job ${ids.root} failed`));

    gateOpen = true;
    const retried = Date.now();
    await app.queue.retry(ids.root);
    expect(await app.queue.waitFor(ids.sink, { timeoutMs })).toMatchObject({ state: 'done' });
    process.stdout.write(`[${db.dialect}] retry of ${WIDTH + 2} jobs: ${Date.now() - retried} ms to done\n`);
    expect(await app.count(`state <> 'done'`)).toBe(0);
    // Once failed, then once done after the retry; every other job once.
    const counts = await finalizeCounts(app);
    expect(counts.get(ids.root)).toBe(2);
    counts.delete(ids.root);
    expect(counts.size).toBe(nodes.length - 1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  }, timeoutMs * 3);

  it(`makes the ${WIDTH} dependents that allow the root's failure ready when it fails, in one cascade`, async () => {
    gateOpen = false;
    // Held back by runAfter once ready: this is about the count-down, not about running 40,000 jobs.
    const later = new Date(Date.now() + 3_600_000);
    const nodes: GraphNode[] = [{ ref: 'root', type: 'gate' }];
    const mids: string[] = [];
    for (let i = 0; i < WIDTH; i++) {
      mids.push(`m${i}`);
      nodes.push({ ref: `m${i}`, type: 'noop', runAfter: later, dependsOn: [{ job: 'root', allowFailure: true }] });
    }
    nodes.push({ ref: 'sink', type: 'noop', dependsOn: mids });
    const ids = await app.queue.enqueueGraph(nodes);
    expect(await app.queue.waitFor(ids.root, { timeoutMs })).toMatchObject({ state: 'failed' });
    await eventually('the count-down', async () => (await app.count(`state = 'ready'`)) === WIDTH, timeoutMs);
    expect(await app.count(`state = 'ready' AND pending_deps = 0`)).toBe(WIDTH);
    // The sink waits for all of them; nothing was cancelled.
    expect(await app.rows(`SELECT state, pending_deps FROM jobs WHERE id = ${ids.sink}`)).toEqual([{ state: 'waiting', pending_deps: WIDTH }]);
    expect(await app.count(`state = 'cancelled'`)).toBe(0);
  }, timeoutMs * 2);

  it(`cancels a container of ${WIDTH} children, and retry() of the container runs them`, async () => {
    const later = new Date(Date.now() + 3_600_000); // not claimable until the retry resets run_after
    const nodes: GraphNode[] = [{ ref: 'box', type: 'container' }];
    for (let i = 0; i < WIDTH; i++) nodes.push({ ref: `c${i}`, type: 'noop', parent: 'box', runAfter: later });
    nodes.push({ ref: 'after', type: 'noop', dependsOn: ['box'] });
    const ids = await app.queue.enqueueGraph(nodes);
    await app.queue.cancel(ids.box);
    expect(await app.count(`state = 'cancelled'`)).toBe(WIDTH + 2);

    await app.queue.retry(ids.box);
    expect(await app.queue.waitFor(ids.after, { timeoutMs })).toMatchObject({ state: 'done' });
    expect(await app.count(`state <> 'done'`)).toBe(0);
  }, timeoutMs * 2);
});

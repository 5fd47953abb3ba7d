import { Injectable } from '@nestjs/common';
import { ClaimService, JobHandler, type GraphNode } from '../../lib';
import type { ClaimRequest } from '../../lib/claim/claim-request';
import { rotationCursorName } from '../../lib/claim/rotation-cursor';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

@Injectable()
class TwoTypes {
  @JobHandler('rc-x')
  async x(): Promise<void> {}

  @JobHandler('rc-y')
  async y(): Promise<void> {}
}

/**
 * The fair-share rotation keeps a cursor per set of handled types (rotationCursorName), so that
 * workers of other types on the same database (another service) do not move it.
 */
describeDialects('a rotation cursor per set of handled types', (db) => {
  let app: QueueApp;
  let claims: ClaimService;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['x', 'y'] });
    claims = app.module.get(ClaimService);
  });
  afterAll(() => app.close());
  beforeEach(async () => {
    await resetTables(app);
    await app.rows(`DELETE FROM job_queue_rotation WHERE name <> 'fair-share'`);
  });

  const claim = (types: string[], slots: number, extra: Partial<ClaimRequest> = {}) =>
    claims.claim({ owner: 'w', types, quotas: [], rotation: slots, leaseTtlMs: 60_000, start: true, ...extra });
  const cursors = async () =>
    Object.fromEntries((await app.rows(`SELECT name, group_key FROM job_queue_rotation WHERE name <> 'fair-share'`)).map((r) => [String(r.name), String(r.group_key)]));

  /** Groups a0..a7: x's jobs in the even ones, y's in the odd ones, two each. */
  async function interleaved(): Promise<void> {
    const nodes: GraphNode[] = [];
    for (let g = 0; g < 8; g++) for (let j = 0; j < 2; j++) nodes.push({ ref: `${g}-${j}`, type: g % 2 ? 'y' : 'x', group: `a${g}` });
    await app.queue.enqueueGraph(nodes);
  }

  it.each([
    ['the claim function', {}],
    ['a claim under caps', { room: { types: { x: 10, y: 10 } } }],
  ])("each set of types goes round its own groups, whatever the other set's claims (%s)", async (_path, extra) => {
    await interleaved();
    expect((await claim(['x'], 2, extra)).map((j) => j.group)).toEqual(['a0', 'a2']);
    // On one shared cursor this walk began at a2, where x's claim left it, and skipped a1.
    expect((await claim(['y'], 2, extra)).map((j) => j.group)).toEqual(['a1', 'a3']);
    expect((await claim(['x'], 2, extra)).map((j) => j.group)).toEqual(['a4', 'a6']);
    expect((await claim(['y'], 2, extra)).map((j) => j.group)).toEqual(['a5', 'a7']);
    expect(await cursors()).toEqual({ [rotationCursorName(['x'])]: 'a6', [rotationCursorName(['y'])]: 'a7' });
    // A claim that names its cursor follows that one (a worker's, for all the types it handles).
    const named = rotationCursorName(['x', 'z']);
    expect((await claim(['x'], 1, { ...extra, rotationCursor: named })).map((j) => j.group)).toEqual(['a0']);
    expect((await cursors())[named]).toBe('a0');
  });

  it('concurrent first claims of a set of types add its cursor once, and take distinct jobs', async () => {
    await app.queue.enqueueGraph(Array.from({ length: 40 }, (_, g) => ({ ref: `g${g}`, type: 'x', group: `g${String(g).padStart(2, '0')}` })));
    const got = await Promise.all(Array.from({ length: 8 }, () => claim(['x'], 2)));
    const ids = got.flat().map((j) => j.id);
    expect(ids).toHaveLength(16);
    expect(new Set(ids).size).toBe(16);
    expect(Object.keys(await cursors())).toEqual([rotationCursorName(['x'])]);
  });

  it("a worker follows the cursor of every type it handles, also while one of them is paused", async () => {
    const worker = await startQueueApp(db, { concurrency: 1, pollIntervalMs: 50 }, [TwoTypes]);
    try {
      await worker.queue.pause({ type: 'rc-y' });
      await worker.queue.enqueueGraph(Array.from({ length: 6 }, (_, g) => ({ ref: `g${g}`, type: 'rc-x', group: `g${g}` })));
      await eventually('all done', async () => (await app.count(`state = 'done'`)) === 6, 30_000, 50);
      const names = Object.keys(await cursors());
      expect(names).toContain(rotationCursorName(['rc-x', 'rc-y']));
      expect(names).not.toContain(rotationCursorName(['rc-x']));
    } finally {
      await worker.queue.resume({ type: 'rc-y' });
      await worker.close();
    }
  });
});

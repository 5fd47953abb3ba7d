import { sql } from '../../lib/database/sql';
import { SlotPlanner } from '../../lib/scheduler/slot-planner';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

/**
 * The planner against a real database: the groups it plans for come from the ready group index,
 * refreshed in the background. What it must never do is leave an idle worker without a plan
 * that reaches a woken job until the poll.
 */
describeDialects('SlotPlanner', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  const input = { free: 4, prefetch: 0, types: ['t'], inFlightByGroup: new Map<string, number>() };

  it('after a short claim for the groups it last saw, finds a newcomer group and asks to plan again', async () => {
    let replans = 0;
    const planner = new SlotPlanner(app.db, 4, {}, () => replans++);
    const [a, b] = await Promise.all([app.queue.enqueue({ type: 't', group: 'a' }), app.queue.enqueue({ type: 't', group: 'b' })]);
    planner.plan(input);
    await eventually('groups a and b seen', async () => replans > 0 && planner.plan(input).quotas.length === 2, 5_000);
    expect(planner.plan(input).quotas.map((q) => q.group).sort()).toEqual(['a', 'b']);
    // a and b run dry (another worker took them); a job of group c is enqueued and wakes us.
    await app.db.run(sql`DELETE FROM jobs WHERE id IN (${sql.list([a.id, b.id])})`);
    await app.queue.enqueue({ type: 't', group: 'c' });
    const before = replans;
    // The list is fresh (well within its 250 ms), so the plan still names a and b: that claim comes back empty.
    expect(planner.plan(input).quotas.map((q) => q.group).sort()).toEqual(['a', 'b']);
    planner.invalidate();
    await eventually('a re-plan requested', async () => replans > before, 2_000);
    const next = planner.plan(input);
    // One group left: any-group quota (which reaches c), or c by name.
    expect(next.quotas).toHaveLength(1);
    expect(next.quotas[0].group === undefined || next.quotas[0].group === 'c').toBe(true);
  });

  it('asks for no re-plan when a refresh finds the same groups, so an idle worker does not spin', async () => {
    let replans = 0;
    const planner = new SlotPlanner(app.db, 4, {}, () => replans++);
    await app.queue.enqueue({ type: 't', group: 'a' });
    planner.plan(input);
    await eventually('group a seen', async () => replans === 1, 5_000);
    for (let i = 0; i < 5; i++) planner.invalidate();
    await new Promise((r) => setTimeout(r, 500));
    expect(replans).toBe(1);
  });

  it("plans a finalize's claim as the plain claim only after a recent look found no group ready", async () => {
    const planner = new SlotPlanner(app.db, 4, {}, () => undefined);
    const afterFinalize = { ...input, afterFinalize: true };
    // No look yet: the rotation, which is fair whatever arrived.
    expect(planner.plan(afterFinalize)).toEqual({ quotas: [], rotation: 4 });
    await new Promise((r) => setTimeout(r, 100)); // the look that plan() began: nothing ready
    // A finalize's claim now takes what it promoted with the plain claim; a tick keeps the rotation.
    expect(planner.plan(afterFinalize)).toEqual({ quotas: [{ limit: 4 }] });
    expect(planner.plan(input)).toEqual({ quotas: [], rotation: 4 });
    // A short claim resets the list's age; the empty look still counts.
    planner.invalidate();
    expect(planner.plan(afterFinalize)).toEqual({ quotas: [{ limit: 4 }] });
    // A backlog of many groups, once seen, is the rotation's again, finalize or not.
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((group) => app.queue.enqueue({ type: 't', group })));
    planner.invalidate();
    await eventually('five groups seen', async () => planner.plan(afterFinalize).rotation === 4, 5_000);
  });
});


import { ClaimService, type GraphNode, type JobQueueService } from '../../lib';
import type { ClaimedJob } from '../../lib/claim/claimed-job';
import { jobColumns, toJobRecord } from '../../lib/database/job-row';
import { sql } from '../../lib/database/sql';
import { handBackLeases } from '../../lib/lease/hand-back.sql';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

describeDialects('ClaimService', (db) => {
  let app: QueueApp;
  let queue: JobQueueService;
  let claims: ClaimService;

  beforeAll(async () => {
    app = await startQueueApp(db, { externalTypes: ['t', 'other', 'unhandled'] });
    queue = app.queue;
    claims = app.module.get(ClaimService);
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  const request = (limit: number, extra: Partial<Parameters<ClaimService['claim']>[0]> = {}) =>
    claims.claim({ owner: 'w1', types: ['t'], quotas: [{ limit }], leaseTtlMs: 30_000, ...extra });

  it('takes ready rows of its types, priority first then id, and leases them', async () => {
    const ids = await queue.enqueueGraph([
      { ref: 'a', type: 't' },
      { ref: 'b', type: 't', priority: 5 },
      { ref: 'c', type: 't', priority: 5 },
      { ref: 'later', type: 't', runAfter: new Date(Date.now() + 3_600_000), priority: 9 },
      { ref: 'otherType', type: 'other', priority: 9 },
      { ref: 'g2', type: 't', group: 'g2' },
      { ref: 'waits', type: 't', dependsOn: ['a'], priority: 9 },
    ]);
    const claimed = await request(10);
    expect(claimed.map((j) => j.id)).toEqual([ids.b, ids.c, ids.a, ids.g2]);
    // The claim hands back what running the job needs; the lease itself is in the row.
    expect(claimed[0]).toEqual({
      id: ids.b, type: 't', args: null, attempts: 1, maxAttempts: 3, group: 'default', priority: 5, parentId: null, timeoutMs: null,
      readyAt: expect.anything(), // run_after as the driver returns it, for the wait metric (issue 12)
    });
    const { rows } = await app.db.run(sql`SELECT ${jobColumns(app.db.dialect)} FROM jobs WHERE id IN (${sql.list(claimed.map((j) => j.id))})`);
    expect(rows).toHaveLength(4);
    for (const job of rows.map((r) => toJobRecord(r, app.db.dialect))) {
      expect(job).toMatchObject({ state: 'leased', leaseOwner: 'w1', attempts: 1, startedAt: null });
      expect(job.leaseExpires!.getTime() - Date.now()).toBeGreaterThan(25_000);
      expect(job.leaseExpires!.getTime() - Date.now()).toBeLessThan(35_000);
    }
    const [row] = await app.rows(`SELECT heartbeat_at FROM jobs WHERE id = ${ids.b}`);
    expect(row.heartbeat_at).not.toBeNull();
    expect(await request(10)).toEqual([]); // leased rows are not claimable
  });

  it('takes jobs of one priority by due time, then id: a job due an hour ago before those enqueued before it', async () => {
    // Every claim path keeps the order: any group, a group's quota, several types merged.
    const shapes: Array<Partial<Parameters<ClaimService['claim']>[0]>> = [{}, { quotas: [{ group: 'default', limit: 10 }] }, { types: ['other', 't'] }];
    for (const shape of shapes) {
      await resetTables(app);
      const ago = (ms: number) => new Date(Date.now() - ms);
      const ids = await queue.enqueueGraph([
        { ref: 'now1', type: 't' },
        { ref: 'hourAgo', type: 'other', runAfter: ago(3_600_000) },
        { ref: 'now2', type: 'other' },
        { ref: 'minuteAgo', type: 't', runAfter: ago(60_000) },
        { ref: 'high', type: 'other', priority: 1 },
        { ref: 'later', type: 't', runAfter: new Date(Date.now() + 3_600_000) },
      ]);
      const both = shape.types === undefined ? (await request(10, { ...shape, types: ['t', 'other'] })) : await request(10, shape);
      expect(both.map((j) => j.id)).toEqual([ids.high, ids.hourAgo, ids.minuteAgo, ids.now1, ids.now2]);
    }
  });

  it('finds due jobs under priorities whose jobs are all due later, on every claim path', async () => {
    const later = new Date(Date.now() + 3_600_000);
    // Any group, a group's quota, several types, and the statements of a claim under caps.
    const shapes: Array<Partial<Parameters<ClaimService['claim']>[0]>> = [
      {},
      { quotas: [{ group: 'g', limit: 10 }] },
      { types: ['other', 't'] },
      { room: { types: { t: 10 } } },
      { room: { types: { t: 10 } }, quotas: [{ group: 'g', limit: 10 }] },
    ];
    // The top priority all due later, or one of its jobs due (fewer than asked for: SQLite reads
    // the top, then the priorities below it); a quota small enough to pick ids first, and one that
    // is not (PICK_FIRST_UP_TO).
    for (const topDue of [false, true]) {
      for (const limit of [10, 30]) {
        for (const shape of shapes) {
          await resetTables(app);
          const nodes: GraphNode[] = [];
          const add = (ref: string, priority: number, due: boolean, n: number) => {
            for (let i = 0; i < n; i++) nodes.push({ ref: `${ref}${i}`, type: 't', group: 'g', priority, ...(due ? {} : { runAfter: later }) });
          };
          add('p5later', 5, false, 30);
          if (topDue) add('p5due', 5, true, 1);
          add('p4later', 4, false, 20); // the priority below the top has nothing due either
          add('p3later', 3, false, 30);
          add('p3due', 3, true, 2);
          add('p1due', 1, true, 3);
          add('p0later', 0, false, 10);
          const ids = await queue.enqueueGraph(nodes);
          const claimed = await request(limit, shape);
          const expected = [...(topDue ? ['p5due0'] : []), 'p3due0', 'p3due1', 'p1due0', 'p1due1', 'p1due2'];
          expect(claimed.map((j) => j.id)).toEqual(expected.map((r) => ids[r]));
          expect(await request(limit, shape)).toEqual([]);
        }
      }
    }
  });

  it('finds due jobs under many priorities whose jobs are all due later (SQLite reads a few one by one, then the rest in one pass)', async () => {
    const later = new Date(Date.now() + 3_600_000);
    // One type, and two (SQLite checks which levels of each are due first).
    for (const types of [['t'], ['other', 't']]) {
      await resetTables(app);
      const nodes: GraphNode[] = [];
      for (let p = 0; p <= 20; p++) nodes.push({ ref: `later${p}`, type: 't', priority: p, runAfter: later });
      for (const p of [19, 12, 3, 0]) nodes.push({ ref: `due${p}`, type: 't', priority: p });
      const ids = await queue.enqueueGraph(nodes);
      expect((await request(3, { types })).map((j) => j.id)).toEqual([ids.due19, ids.due12, ids.due3]);
      expect((await request(10, { types })).map((j) => j.id)).toEqual([ids.due0]);
      expect(await request(10, { types })).toEqual([]);
    }
  });

  it('a job handed back (shutdown, a pause) keeps its place in claim order', async () => {
    const ids = await queue.enqueueGraph([{ ref: 'a', type: 't' }, { ref: 'b', type: 't' }, { ref: 'c', type: 't' }]);
    const [first] = await request(1, { start: true });
    expect(first.id).toBe(ids.a);
    const [before] = await app.rows(`SELECT run_after FROM jobs WHERE id = ${ids.a}`);
    await new Promise((r) => setTimeout(r, 20)); // a later clock than a's due time
    expect(await handBackLeases(app.db, 'w1', [ids.a])).toEqual({ handedBack: 1, held: [] });
    const { d } = await queue.enqueueGraph([{ ref: 'd', type: 't' }]);
    expect((await request(10)).map((j) => j.id)).toEqual([ids.a, ids.b, ids.c, d]);
    const [after] = await app.rows(`SELECT run_after, attempts FROM jobs WHERE id = ${ids.a}`);
    expect(String(after.run_after)).toBe(String(before.run_after));
    expect(Number(after.attempts)).toBe(1); // the handed-back attempt was not counted; this claim's is
  });

  it('respects the limit, and "start" writes running and started_at in the same statement', async () => {
    await queue.enqueueGraph(Array.from({ length: 5 }, (_, i) => ({ ref: `j${i}`, type: 't' })));
    const first = await request(2, { start: true });
    expect(first).toHaveLength(2);
    const startedIds = first.map((j) => j.id).join(', ');
    expect(await app.count(`id IN (${startedIds}) AND state = 'running' AND started_at IS NOT NULL`)).toBe(2);
    expect(await request(10)).toHaveLength(3);
  });

  it('claims per group quota in one transaction', async () => {
    const nodes = [];
    for (const g of ['a', 'b', 'c']) for (let i = 0; i < 4; i++) nodes.push({ ref: `${g}${i}`, type: 't', group: g });
    await queue.enqueueGraph(nodes);
    const claimed = await claims.claim({
      owner: 'w1',
      types: ['t'],
      quotas: [
        { group: 'a', limit: 3 },
        { group: 'b', limit: 1 },
      ],
      leaseTtlMs: 30_000,
    });
    const perGroup = claimed.reduce<Record<string, number>>((acc, j) => ({ ...acc, [j.group]: (acc[j.group] ?? 0) + 1 }), {});
    expect(perGroup).toEqual({ a: 3, b: 1 });
  });

  // An idle worker that has seen no group yet claims by the rotation; the cursor then sits at
  // the group it served, with that visit complete. The next job of the same lone group must
  // start a new visit (it got nothing, and waited for the poll: listen-notify under load).
  it.each([
    ['the claim function', {}],
    ['a claim under caps', { room: { types: { t: 10 } } }],
  ])('the rotation serves a lone group again once its visit is complete (%s)', async (_path, extra) => {
    await app.db.run(sql`UPDATE job_queue_rotation SET group_key = '', served = 0`);
    for (let round = 0; round < 3; round++) {
      const { id } = await queue.enqueue({ type: 't', group: 'solo' });
      const claimed = await claims.claim({ owner: 'w1', types: ['t'], quotas: [], rotation: 10, leaseTtlMs: 30_000, ...extra });
      expect(claimed.map((j) => j.id)).toEqual([id]);
    }
    // With slots left after the other groups, the round comes back to it within the same claim.
    await queue.enqueueGraph([{ ref: 's', type: 't', group: 'solo' }, { ref: 'o', type: 't', group: 'other' }]);
    const both = await claims.claim({ owner: 'w1', types: ['t'], quotas: [], rotation: 10, leaseTtlMs: 30_000, ...extra });
    expect(both.map((j) => j.group).sort()).toEqual(['other', 'solo']);
  });

  // Under per-group caps or rate limits every claim that may take any group goes through the
  // rotation (claimUnderLimits), so a worker that sees one tenant claims it by the rotation too.
  // One visit per group per claim left it one job per claim: 100-230 jobs/s on every dialect.
  it.each([
    ['per-group caps', { limits: { groups: { elsewhere: 2 } } }],
    ['per-group rate limits', { rateLimits: { groups: { elsewhere: { limit: 1_000, intervalMs: 1_000 } } } }],
  ])('the rotation fills every slot from fewer groups than slots, by weight, round after round (%s)', async (_path, extra) => {
    await app.db.run(sql`UPDATE job_queue_rotation SET group_key = '', served = 0`);
    await queue.enqueueGraph(Array.from({ length: 50 }, (_, i) => ({ ref: `s${i}`, type: 't', group: 'solo' })));
    const rotation = (slots: number, more: Partial<Parameters<ClaimService['claim']>[0]> = {}) =>
      claims.claim({ owner: 'w1', types: ['t'], quotas: [], rotation: slots, leaseTtlMs: 30_000, ...extra, ...more });
    expect((await rotation(20)).length).toBe(20);
    expect((await rotation(20)).length).toBe(20); // the cursor now sits on the group, its visit complete
    await resetTables(app);
    await app.db.run(sql`UPDATE job_queue_rotation SET group_key = '', served = 0`);
    const nodes: GraphNode[] = [];
    for (let i = 0; i < 30; i++) nodes.push({ ref: `a${i}`, type: 't', group: 'a', weight: 1 }, { ref: `b${i}`, type: 't', group: 'b', weight: 3 });
    await queue.enqueueGraph(nodes);
    const count = (jobs: ClaimedJob[]) => jobs.reduce<Record<string, number>>((acc, j) => ({ ...acc, [j.group]: (acc[j.group] ?? 0) + 1 }), {});
    expect(count(await rotation(12))).toEqual({ a: 3, b: 9 });
    // A group's cap still binds inside the extra rounds.
    const capped = count(await rotation(12, { limits: { groups: { a: 5 } } }));
    expect(capped.a).toBe(2); // 3 in flight from the claim before
    expect(capped.b).toBeLessThanOrEqual(9);
  });

  it('the rotation finds due jobs under priorities whose jobs are all due later, and takes none of those', async () => {
    await app.db.run(sql`UPDATE job_queue_rotation SET group_key = '', served = 0`);
    const later = new Date(Date.now() + 3_600_000);
    const nodes: GraphNode[] = [];
    const add = (group: string, ref: string, priority: number, due: boolean, n: number) => {
      for (let i = 0; i < n; i++) nodes.push({ ref: `${group}-${ref}${i}`, type: 't', group, priority, ...(due ? {} : { runAfter: later }) });
    };
    add('g', 'p5later', 5, false, 30);
    add('g', 'p3later', 3, false, 30);
    add('g', 'p3due', 3, true, 2);
    add('g', 'p1due', 1, true, 3);
    add('g', 'p0later', 0, false, 10);
    add('h', 'p2due', 2, true, 1);
    add('k', 'p4later', 4, false, 5);
    const ids = await queue.enqueueGraph(nodes);
    const taken: ClaimedJob[] = [];
    for (let round = 0; round < 10; round++) {
      const claimed = await claims.claim({ owner: 'w1', types: ['t'], quotas: [], rotation: 10, leaseTtlMs: 30_000 });
      if (!claimed.length) break;
      taken.push(...claimed);
    }
    const inGroup = (g: string) => taken.filter((j) => j.group === g).map((j) => j.id);
    expect(inGroup('g')).toEqual(['p3due0', 'p3due1', 'p1due0', 'p1due1', 'p1due2'].map((r) => ids[`g-${r}`]));
    expect(inGroup('h')).toEqual([ids['h-p2due0']]);
    expect(taken).toHaveLength(6);
  });

  it('the rotation of a worker of many types reads the types each group has, under their jobs due later, and no other', async () => {
    // Past 4 handled types SQLite looks up which of them a group has ready rows of, then reads
    // those head by head.
    await app.db.run(sql`UPDATE job_queue_rotation SET group_key = '', served = 0`);
    const later = new Date(Date.now() + 3_600_000);
    const nodes: GraphNode[] = [];
    const add = (group: string, type: string, ref: string, priority: number, due: boolean, n: number) => {
      for (let i = 0; i < n; i++) nodes.push({ ref: `${group}-${ref}${i}`, type, group, priority, ...(due ? {} : { runAfter: later }) });
    };
    add('g', 't', 'p5later', 5, false, 30);
    add('g', 't', 'p3due', 3, true, 2);
    add('g', 'other', 'o4later', 4, false, 20);
    add('g', 'other', 'o2due', 2, true, 2);
    add('g', 'unhandled', 'u9due', 9, true, 3);
    add('g', 't', 'p1due', 1, true, 3);
    add('h', 'other', 'o0due', 0, true, 1);
    add('m', 'unhandled', 'u0due', 0, true, 4);
    const ids = await queue.enqueueGraph(nodes);
    const types = ['a', 'b', 'c', 'other', 't', 'v'];
    const taken: ClaimedJob[] = [];
    for (let round = 0; round < 12; round++) {
      const claimed = await claims.claim({ owner: 'w1', types, quotas: [], rotation: 10, leaseTtlMs: 30_000 });
      if (!claimed.length) break;
      taken.push(...claimed);
    }
    const inGroup = (g: string) => taken.filter((j) => j.group === g).map((j) => j.id);
    expect(inGroup('g')).toEqual(['p3due0', 'p3due1', 'o2due0', 'o2due1', 'p1due0', 'p1due1', 'p1due2'].map((r) => ids[`g-${r}`]));
    expect(inGroup('h')).toEqual([ids['h-o0due0']]);
    expect(taken).toHaveLength(8);
  });

  it('returns nothing for no types or no quota', async () => {
    await queue.enqueue({ type: 't' });
    expect(await request(0)).toEqual([]);
    expect(await request(5, { types: [] })).toEqual([]);
    expect(await app.count(`state = 'ready'`)).toBe(1);
  });
});

import { Injectable } from '@nestjs/common';
import { JobContext, JobHandler, type GraphNode } from '../../lib';
import { rotationCursorName } from '../../lib/claim/rotation-cursor';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

/** Group of every job start, in start order (the in-process specs). */
const started: string[] = [];

@Injectable()
class NapHandlers {
  @JobHandler('nap')
  async nap(args: { ms: number }, ctx: JobContext): Promise<void> {
    started.push(ctx.group);
    await new Promise((r) => setTimeout(r, args.ms));
  }
}

/**
 * 9,000 jobs through three processes: ~10 s on PostgreSQL and SQLite, ~30 s on MariaDB (whose
 * rotation claim costs a statement per group) on a quiet machine; 3-4x that on a loaded one.
 */
const JOBS_TIMEOUT_MS = 9_000 * 30;

const key = (prefix: string, i: number) => `${prefix}${String(i).padStart(5, '0')}`;

/** Enqueues in chunks, so no single transaction holds thousands of rows. */
async function enqueueAll(app: QueueApp, nodes: GraphNode[]): Promise<void> {
  for (let i = 0; i < nodes.length; i += 2_000) await app.queue.enqueueGraph(nodes.slice(i, i + 2_000));
}

function naps(groups: string[], perGroup: number, ms: number, weight?: number): GraphNode[] {
  const nodes: GraphNode[] = [];
  for (let j = 0; j < perGroup; j++) {
    for (const group of groups) nodes.push({ ref: `${group}-${j}-${Math.random()}`, type: 'nap', group, weight, args: { ms } });
  }
  return nodes;
}

/**
 * From jobs' groups in start order: where each group first started, where any group first got its
 * third slot, and how many groups first started after that (0 in a perfectly fair round).
 */
function startOrder(rows: Array<Record<string, unknown>>): { firstAt: Map<string, number>; firstThird: number; late: number } {
  const slot = new Map<string, number>();
  const firstAt = new Map<string, number>();
  let firstThird = Infinity;
  rows.forEach((r, i) => {
    const g = String(r.group_key);
    const n = (slot.get(g) ?? 0) + 1;
    slot.set(g, n);
    if (n === 1) firstAt.set(g, i);
    if (n === 3) firstThird = Math.min(firstThird, i);
  });
  return { firstAt, firstThird, late: [...firstAt.values()].filter((i) => i > firstThird).length };
}

describeDialects('fair share at tenant scale', (db) => {
  let app: QueueApp | undefined;
  const workers: WorkerProcess[] = [];

  beforeEach(() => {
    started.length = 0;
  });
  afterEach(async () => {
    workers.splice(0).forEach((w) => w.kill());
    await app?.close();
    app = undefined;
  });

  it('3 worker processes, 3,000 backlogged groups: every group starts before any group gets its third slot', async () => {
    const G = 3_000;
    app = await startQueueApp(db, { worker: false, externalTypes: ['nap'] });
    await resetTables(app);
    const groups = Array.from({ length: G }, (_, i) => key('g', i));
    // Jobs of one group get consecutive ids: a claim in id order would hand a group all three at once.
    const nodes: GraphNode[] = [];
    for (const group of groups) for (let j = 0; j < 3; j++) nodes.push({ ref: `${group}-${j}`, type: 'nap', group, args: { ms: 3 } });
    await enqueueAll(app, nodes);
    for (let i = 0; i < 3; i++) workers.push(new WorkerProcess('fair-share.worker', { ...db.options(), concurrency: 10, pollIntervalMs: 50 }));
    await Promise.all(workers.map((w) => w.waitFor('ready')));
    await eventually('all 9,000 jobs done', async () => (await app!.count(`state = 'done'`)) === 3 * G, JOBS_TIMEOUT_MS, 200);

    // Starts in the order the claims took them (the clock of the database that wrote started_at).
    const rows = await app.rows(`SELECT group_key FROM jobs ORDER BY started_at, id`);
    const { firstAt, firstThird, late } = startOrder(rows);
    const lastFirst = Math.max(...firstAt.values());
    workers.forEach((w) => w.send('report'));
    const ran = await Promise.all(workers.map(async (w) => Number((await w.waitFor('ran')).n)));
    process.stdout.write(
      `[${db.dialect}] 3,000 groups x 3 processes: last first start at #${lastFirst}, first third slot at #${firstThird}, ` +
        `groups first started after it: ${late}; jobs run per process: ${ran.join(', ')}\n`,
    );
    expect(firstAt.size).toBe(G);
    // Tolerance: claims in flight at once across the three processes (30 slots) may straddle a round.
    expect(late).toBeLessThanOrEqual(30);
    for (const n of ran) expect(n).toBeGreaterThan(0);
  }, JOBS_TIMEOUT_MS + 60_000);

  it("two services on one database, 1,000 groups each, interleaved: each service's rotation passes the other's groups, and is as fair as one service alone", async () => {
    const G = 2_000;
    app = await startQueueApp(db, { worker: false, externalTypes: ['nap', 'tenant'] });
    await resetTables(app);
    // Even groups hold the nap service's jobs, odd ones the tenant service's: every other pair a
    // walk meets is the other service's, so each rotation claim jumps past them.
    const nodes: GraphNode[] = [];
    for (let i = 0; i < G; i++) {
      for (let j = 0; j < 3; j++) nodes.push({ ref: `${i}-${j}`, type: i % 2 ? 'tenant' : 'nap', group: key('g', i), args: { ms: 3 } });
    }
    await enqueueAll(app, nodes);
    const options = { ...db.options(), concurrency: 10, pollIntervalMs: 50 };
    workers.push(new WorkerProcess('fair-share.worker', options), new WorkerProcess('tenants.worker', options));
    await Promise.all(workers.map((w) => w.waitFor('ready')));
    await eventually('all 6,000 jobs done', async () => (await app!.count(`state = 'done'`)) === 3 * G, 6_000 * 30, 200);
    expect(await app.count(`attempts <> 1`)).toBe(0);

    for (const type of ['nap', 'tenant']) {
      const rows = await app.rows(`SELECT group_key FROM jobs WHERE type = '${type}' ORDER BY started_at, id`);
      const { firstAt, firstThird, late } = startOrder(rows);
      process.stdout.write(`[${db.dialect}] two services, ${type}: ${firstAt.size} groups, first third slot at #${firstThird}, groups first started after it: ${late}\n`);
      expect(firstAt.size).toBe(G / 2);
      // Each service goes round its own groups on a cursor of its own. When they shared one, each
      // moved it past the other's rounds, and 120-386 groups first started after another's third slot.
      expect(late).toBeLessThanOrEqual(30);
    }
    const cursors = await app.rows(`SELECT name FROM job_queue_rotation WHERE name <> 'fair-share' ORDER BY name`);
    expect(cursors.map((r) => String(r.name))).toEqual([rotationCursorName(['nap']), rotationCursorName(['tenant'])].sort());
  }, 6_000 * 30 + 60_000);

  it('1,000 busy groups keep receiving work; 500 newcomers start within one round', async () => {
    const busy = Array.from({ length: 1_000 }, (_, i) => key('m', i));
    // Newcomers sort both before and after the busy groups in the group index.
    const newcomers = [...Array.from({ length: 250 }, (_, i) => key('a', i)), ...Array.from({ length: 250 }, (_, i) => key('z', i))];
    app = await startQueueApp(db, { worker: false }, [NapHandlers]);
    await resetTables(app);
    await enqueueAll(app, naps(busy, 5, 2));
    await app.close();
    app = await startQueueApp(db, { concurrency: 10, pollIntervalMs: 50 }, [NapHandlers]);
    await eventually('a round of the busy groups', async () => started.length >= 1_200, 60_000);
    // The busy groups keep receiving work: 20 more jobs every 50 ms, round the busy groups.
    let fed = 0;
    let feeding = Promise.resolve();
    const feeder = setInterval(() => {
      const more = Array.from({ length: 20 }, (_, k) => busy[(fed + k) % busy.length]);
      fed += more.length;
      feeding = feeding.then(() => enqueueAll(app!, naps(more, 1, 2)));
    }, 50);
    const fresh = new Set(newcomers);
    let appeared = 0;
    try {
      await enqueueAll(app, naps(newcomers, 2, 2));
      appeared = started.length;
      await eventually('every newcomer started', async () => new Set(started.filter((g) => fresh.has(g))).size === newcomers.length, 60_000);
    } finally {
      clearInterval(feeder);
      await feeding;
    }
    const firstStart = new Map<string, number>();
    started.forEach((g, i) => fresh.has(g) && !firstStart.has(g) && firstStart.set(g, i - appeared));
    const waits = [...firstStart.values()].sort((a, b) => a - b);
    const G = busy.length + newcomers.length;
    process.stdout.write(
      `[${db.dialect}] newcomers among 1,000 busy groups: first start after p50 ${waits[waits.length >> 1]} / max ${waits[waits.length - 1]} ` +
        `other starts (one round = ${G}); busy groups fed ${fed} more jobs meanwhile\n`,
    );
    // One round of G slots, plus what was claimed or refreshed when they appeared.
    expect(waits[waits.length - 1]).toBeLessThanOrEqual(G + 100);
  });

  it('two groups of weight 10 among 1,000 of weight 1 get 10x the slots while all are backlogged', async () => {
    const light = Array.from({ length: 1_000 }, (_, i) => key('l', i));
    app = await startQueueApp(db, { worker: false }, [NapHandlers]);
    await resetTables(app);
    await enqueueAll(app, [...naps(light, 4, 2, 1), ...naps(['h00100', 'h00200'], 60, 2, 10)]);
    await app.close();
    app = await startQueueApp(db, { concurrency: 10, pollIntervalMs: 50 }, [NapHandlers]);
    await eventually('three rounds', async () => started.length >= 3_200, 60_000);
    await app.close();
    app = undefined;
    const window = started.slice(100, 3_100); // about three rounds of 1,020 slots, all groups backlogged
    const heavy = ['h00100', 'h00200'].map((g) => window.filter((s) => s === g).length);
    const lightMean = window.filter((s) => s.startsWith('l')).length / light.length;
    process.stdout.write(`[${db.dialect}] weighted: heavy groups ${heavy.join(', ')} slots; light mean ${lightMean.toFixed(2)}; ratio ${(heavy[0] / lightMean).toFixed(1)}, ${(heavy[1] / lightMean).toFixed(1)}\n`);
    for (const h of heavy) {
      expect(h / lightMean).toBeGreaterThan(8);
      expect(h / lightMean).toBeLessThan(12);
    }
  });
});

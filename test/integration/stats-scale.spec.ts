import { InvalidCursorError, InvalidQueryError, type GraphNode, type ScheduleView } from '../../lib';
import { sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { busiestGroupsStatement, readBusiestGroups, sqliteReadyGroupsSlice, SQLITE_GROUP_SLICE } from '../../lib/stats/queue-stats.sql';
import { describeDialects } from '../support/describe-dialects';
import { explainText } from '../support/plan-reads';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const GROUPS = 20_000;
const SCHEDULES = 10_000;
const HOUR = 3_600_000;

/** Zero-padded, so that every dialect's text order is the numeric one. */
const scheduleName = (n: number) => `tenant-${String(n).padStart(5, '0')}.${n % 2 ? 'report' : 'refresh'}`;

/** Schedule rows as queue.schedule() stores them (one call each took 15–25 s for 10,000), due one second apart. */
async function insertSchedules(app: QueueApp, first: Date): Promise<void> {
  const t = (ms: number) => app.db.dialect.timeParam(new Date(first.getTime() + ms));
  for (let i = 0; i < SCHEDULES; i += 1_000) {
    const rows = Array.from({ length: Math.min(1_000, SCHEDULES - i) }, (_, k) => {
      const n = i + k;
      // Names and due times in opposite orders, so "soonest" and "by name" differ.
      const type = n % 2 ? 'report' : 'refresh';
      return sql`(${scheduleName(n)}, '0 0 1 1 *', 'UTC', ${type}, ${JSON.stringify({ tenant: n })}, 'none', 10000, ${JSON.stringify({ group: `g${n % 50}` })}, ${t((SCHEDULES - n) * 1_000)}, ${t(0)}, ${t(0)})`;
    });
    await app.db.run(sql`INSERT INTO job_queue_schedules (name, cron, time_zone, job_type, args, backfill, misfire_grace_ms, job_options, next_run_at, created_at, updated_at)
      VALUES ${sql.join(rows)}`);
  }
}

describeDialects(`stats() and findSchedules() with ${GROUPS.toLocaleString('en-US')} tenants and ${SCHEDULES.toLocaleString('en-US')} schedules`, (db) => {
  let app: QueueApp;
  const first = new Date(Date.UTC(2100, 0, 1));

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['noop', 'refresh', 'report'] });
    const later = new Date(Date.now() + HOUR);
    const nodes: GraphNode[] = Array.from({ length: GROUPS }, (_, i) => ({ ref: `t${i}`, type: 'noop', group: `tenant-${i}`, runAfter: later }));
    // Three busy tenants: 30, 20 and 20 ready jobs (the tie goes by name).
    for (const [group, n] of [['busy-a', 30], ['busy-c', 20], ['busy-b', 20]] as const) {
      for (let i = 0; i < n; i++) nodes.push({ ref: `${group}-${i}`, type: 'noop', group, runAfter: later });
    }
    await app.queue.enqueueGraph(nodes);
    await insertSchedules(app, first);
  }, 120_000);

  afterAll(() => app?.close());

  it('lists the busiest groups and the schedules due soonest, bounded, and counts them all', async () => {
    const started = performance.now();
    const stats = await app.queue.stats();
    const ms = performance.now() - started;
    expect(stats.groupCount).toBe(GROUPS + 3);
    expect(stats.groups).toHaveLength(100);
    expect(stats.groups.slice(0, 3)).toEqual([
      { group: 'busy-a', ready: 30, running: 0 },
      { group: 'busy-b', ready: 20, running: 0 },
      { group: 'busy-c', ready: 20, running: 0 },
    ]);
    expect(stats.groups.slice(3).every((g) => g.ready === 1 && g.running === 0)).toBe(true);
    expect(stats.byState.ready).toBe(GROUPS + 70);
    expect(stats.scheduleCount).toBe(SCHEDULES);
    expect(stats.schedules).toHaveLength(100);
    // Due soonest first: the last tenant is due first, one second apart.
    expect(stats.schedules[0]).toEqual({ name: scheduleName(SCHEDULES - 1), nextRunAt: new Date(first.getTime() + 1_000), lastRunAt: null });
    const due = stats.schedules.map((s) => s.nextRunAt.getTime());
    expect(due).toEqual([...due].sort((a, b) => a - b));
    const bytes = JSON.stringify(stats).length;
    expect(bytes).toBeLessThan(20_000);
    process.stdout.write(`[${db.dialect}] stats() with ${GROUPS + 3} groups and ${SCHEDULES} schedules: ${ms.toFixed(0)} ms, ${bytes} bytes\n`);

    const wide = await app.queue.stats({ groupsLimit: 1_000, schedulesLimit: 1_000 });
    expect([wide.groups.length, wide.schedules.length, wide.groupCount, wide.scheduleCount]).toEqual([1_000, 1_000, GROUPS + 3, SCHEDULES]);
  });

  it('finds the same busiest groups as one GROUP BY, in-flight groups included; SQLite by slices of groups', async () => {
    // In flight: 5 of busy-c's jobs, and tenant-0's only job (its group then has nothing ready).
    const later = app.db.dialect.timeParam(new Date(Date.now() + HOUR));
    for (const where of [sql`group_key = 'busy-c' AND ref IN ('busy-c-0', 'busy-c-1', 'busy-c-2', 'busy-c-3', 'busy-c-4')`, sql`group_key = 'tenant-0'`]) {
      await app.db.run(sql`UPDATE jobs SET state = 'running', lease_owner = 'w1', lease_expires = ${later}, started_at = created_at WHERE ${where}`);
    }
    let statements = 0;
    let largest = 0;
    const recording: SqlExecutor = {
      dialect: app.db.dialect,
      run: async (s) => {
        statements++;
        const result = await app.db.run(s);
        largest = Math.max(largest, result.rows.length);
        return result;
      },
    };
    const read = await readBusiestGroups(recording, 1_000);
    const { rows } = await app.db.run(busiestGroupsStatement(1_000));
    expect(read.count).toBe(Number(rows[0].total));
    expect(read.count).toBe(GROUPS + 3);
    expect(read.groups).toEqual(rows.map((r) => ({ group: String(r.group_key), ready: Number(r.ready), running: Number(r.running) })));
    expect(read.groups.slice(0, 3)).toEqual([
      { group: 'busy-a', ready: 30, running: 0 },
      { group: 'busy-b', ready: 20, running: 0 },
      { group: 'busy-c', ready: 15, running: 5 },
    ]);
    expect(read.groups).toContainEqual({ group: 'tenant-0', ready: 0, running: 1 });
    if (db.dialect === 'sqlite') {
      // The in-flight read, then one slice per 500 groups with ready jobs.
      expect(statements).toBe(1 + Math.ceil((GROUPS + 2) / SQLITE_GROUP_SLICE));
      expect(largest).toBeLessThanOrEqual(SQLITE_GROUP_SLICE);
      const plan = await explainText(app, 'EXPLAIN QUERY PLAN', sqliteReadyGroupsSlice('tenant-1'));
      expect(plan).toMatch(/SEARCH jobs USING COVERING INDEX jobs_ready_group_idx \(group_key>\?\)/);
    } else {
      expect(statements).toBe(1);
    }
  });

  it('refuses bad stats options with a typed error', async () => {
    for (const bad of [{ groupsLimit: 0 }, { schedulesLimit: 1_001 }, { windowMs: -1 }, { groups: 5 }]) {
      await expect(app.queue.stats(bad as never)).rejects.toBeInstanceOf(InvalidQueryError);
    }
  });

  it('pages through every schedule by name, without gaps or repeats, and by type', async () => {
    const seen: ScheduleView[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof app.queue.findSchedules>> = await app.queue.findSchedules({}, { limit: 500, cursor });
      expect(page.schedules.length).toBeLessThanOrEqual(500);
      seen.push(...page.schedules);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(SCHEDULES / 500);
    const names = seen.map((s) => s.name);
    expect(new Set(names).size).toBe(SCHEDULES);
    expect(names).toEqual([...names].sort());
    expect(seen[0]).toMatchObject({ name: scheduleName(0), type: 'refresh', args: { tenant: 0 }, cron: '0 0 1 1 *', lastRunAt: null });

    const reports: string[] = [];
    cursor = null;
    do {
      const page: Awaited<ReturnType<typeof app.queue.findSchedules>> = await app.queue.findSchedules({ type: 'report' }, { limit: 500, cursor });
      reports.push(...page.schedules.map((s) => s.name));
      cursor = page.nextCursor;
    } while (cursor);
    expect(reports).toHaveLength(SCHEDULES / 2);
    expect(reports.every((n) => n.endsWith('.report'))).toBe(true);

    const firstPage = await app.queue.findSchedules({ type: 'report' }, { limit: 10 });
    expect(firstPage.schedules).toHaveLength(10);
    await expect(app.queue.findSchedules({}, { cursor: firstPage.nextCursor })).rejects.toBeInstanceOf(InvalidCursorError);
    await expect(app.queue.findSchedules({ type: 'report' }, { limit: 501 })).rejects.toBeInstanceOf(InvalidQueryError);
    await expect(app.queue.findSchedules({ slot: 'x' } as never)).rejects.toBeInstanceOf(InvalidQueryError);
    await expect(app.queue.findSchedules({ name: 'n'.repeat(300) })).rejects.toBeInstanceOf(InvalidQueryError);
    // One schedule by name among 10,000 (its key), alone or with a type that must match too.
    const named = scheduleName(SCHEDULES - 2);
    expect((await app.queue.findSchedules({ name: named })).schedules.map((s) => s.name)).toEqual([named]);
    expect((await app.queue.findSchedules({ name: named, type: named.endsWith('.report') ? 'refresh' : 'report' })).schedules).toEqual([]);
    expect(await app.queue.findSchedules({ name: 'no-such-schedule' })).toEqual({ schedules: [], nextCursor: null });
    expect(await app.queue.findSchedules({ type: 'nothing' })).toEqual({ schedules: [], nextCursor: null });

    // A tenant's schedules: the group is in the job options (unindexed), 200 of 10,000 here.
    const tenant = await app.queue.findSchedules({ group: 'g8' }, { limit: 500 });
    expect(tenant.nextCursor).toBeNull();
    expect(tenant.schedules).toHaveLength(SCHEDULES / 50);
    expect(tenant.schedules.every((s) => s.group === 'g8' && Number(s.name.slice(7, 12)) % 50 === 8)).toBe(true);
    const byBoth = await app.queue.findSchedules({ type: 'refresh', group: 'g8' }, { limit: 100 });
    expect(byBoth.schedules).toHaveLength(100);
    const rest = await app.queue.findSchedules({ type: 'refresh', group: 'g8' }, { limit: 100, cursor: byBoth.nextCursor });
    expect([...byBoth.schedules, ...rest.schedules].map((s) => s.name)).toEqual(tenant.schedules.map((s) => s.name));
    expect(await app.queue.findSchedules({ type: 'report', group: 'g8' })).toEqual({ schedules: [], nextCursor: null });
    await expect(app.queue.findSchedules({ type: 'refresh' }, { cursor: byBoth.nextCursor })).rejects.toBeInstanceOf(InvalidCursorError);
  });
});

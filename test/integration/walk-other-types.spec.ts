import { handledPairAfter, walkRotation } from '../../lib/claim/rotation.sql';
import { sql, type Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { readyGroups } from '../../lib/scheduler/ready-groups.sql';
import { describeDialects } from '../support/describe-dialects';
import { explainText, mysqlRowsRead } from '../support/plan-reads';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const OTHER_TYPES = 3_000;
const GROUPS = 20;

/**
 * A worker's walk of the ready groups (the slot planner's look every 250 ms, and on SQLite the
 * rotation claim) stepped over the ready rows' (group, type) pairs one statement each, handled
 * or not. Beside a group holding 3,000 types another worker handles, every walk was 3,000
 * statements: on SQLite 34–64 ms of the event loop each (one dashboard overview took 26 s), on
 * MariaDB 1.2 s per planner look. Past a few of another worker's pairs in a group, the walk now
 * jumps to the group's next handled type in one statement.
 */
describeDialects(`a walk beside ${OTHER_TYPES.toLocaleString('en')} ready types this worker does not handle`, (db) => {
  let app: QueueApp;
  const groups = Array.from({ length: GROUPS }, (_, i) => `g${String(i).padStart(2, '0')}`);

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['mine', 'b-mine', 'y-mine'] });
    const d = app.db.dialect;
    const insert = async (rows: Array<{ type: string; group: string; priority?: number; later?: boolean }>) => {
      for (let i = 0; i < rows.length; i += 500) {
        const values = rows.slice(i, i + 500).map(
          (r) => sql`(${r.type}, '{}', 'ready', ${r.group}, ${r.priority ?? 0}, ${r.later ? d.timeParam(new Date(Date.now() + 3_600_000)) : d.now()}, ${d.now()}, ${d.now()})`,
        );
        await app.db.run(sql`INSERT INTO jobs (type, args, state, group_key, priority, run_after, created_at, updated_at) VALUES ${sql.join(values)}`);
      }
    };
    // 'default' sorts first: 3,000 types of another worker, none of ours.
    await insert(Array.from({ length: OTHER_TYPES }, (_, i) => ({ type: `other-${String(i).padStart(4, '0')}`, group: 'default' })));
    // 'f-mixed': ours between and after others', the later one of higher priority; 'f-late': ours due in an hour only.
    const others = (prefix: string, group: string) => Array.from({ length: 9 }, (_, i) => ({ type: `${prefix}-${i}`, group }));
    await insert([...others('a', 'f-mixed'), ...Array.from({ length: 2_000 }, () => ({ type: 'b-mine', group: 'f-mixed' })), ...others('c', 'f-mixed'), { type: 'y-mine', group: 'f-mixed', priority: 5 }, ...others('z', 'f-mixed')]);
    await insert([...others('a', 'f-late'), { type: 'mine', group: 'f-late', later: true }, ...others('c', 'f-late')]);
    await insert(groups.map((group) => ({ type: 'mine', group })));
  }, 120_000);
  afterAll(() => app?.close());

  /** `on`, counting statements. */
  const counting = (on: SqlExecutor, sent: { n: number }): SqlExecutor => ({
    dialect: on.dialect,
    run: (s: Sql) => {
      sent.n++;
      return on.run(s);
    },
  });
  /** Statements the walk may send on SQLite and MySQL: a few per group passed, none per type. */
  const bound = (groupsPassed: number) => 8 * groupsPassed;

  it("the planner's look finds the same groups in a few statements per group", async () => {
    const sent = { n: 0 };
    const found = await readyGroups(counting(app.db, sent), ['mine'], 11);
    expect(found.map((g) => g.group)).toEqual(groups.slice(0, 11));
    const both = await readyGroups(app.db, ['b-mine', 'y-mine', 'mine'], 3);
    expect(both.map((g) => g.group)).toEqual(['f-mixed', 'g00', 'g01']);
    // PostgreSQL walks in one function call.
    if (db.dialect !== 'postgres') expect(sent.n).toBeLessThanOrEqual(bound(2 + 11));
    else expect(sent.n).toBe(1);
  });

  it("a jump reads an index entry per handled type, not the group's backlog of one", async () => {
    const jump = handledPairAfter(app.db.dialect, { group: 'f-mixed', type: 'a-3' }, ['b-mine', 'y-mine', 'mine'], undefined);
    expect((await app.db.run(jump)).rows.map((r) => [r.group_key, r.type])).toEqual([['f-mixed', 'b-mine']]);
    const last = handledPairAfter(app.db.dialect, { group: 'f-mixed', type: 'y-mine' }, ['b-mine', 'y-mine', 'mine'], undefined);
    expect((await app.db.run(last)).rows.map((r) => [r.group_key, r.type])).toEqual([['g00', 'mine']]);
    if (db.dialect === 'sqlite') {
      // Each arm a seek that stops at its first entry (the IN list is walked in index order); the
      // union sorts the arms' single rows.
      const plan = await explainText(app, 'EXPLAIN QUERY PLAN', jump);
      expect(plan).toMatch(/SEARCH jobs USING COVERING INDEX jobs_ready_group_idx \(group_key=\? AND type=\?\)/);
      expect(plan).not.toMatch(/SCAN jobs/);
    }
    if (db.dialect === 'mysql') expect((await mysqlRowsRead(app, (tx) => tx.run(jump))).read).toBeLessThan(20);
  });

  it('a rotation walk takes each group its best head, from the cursor and wrapped round below it', async () => {
    const sent = { n: 0 };
    await app.db.run(sql`UPDATE job_queue_rotation SET group_key = 'g05' WHERE name = 'fair-share'`);
    const walk = await app.db.transaction((tx) => walkRotation(counting(tx, sent), ['b-mine', 'y-mine', 'mine'], 30, []));
    expect(walk.cursor.group).toBe('g05');
    expect(walk.groups.map((g) => g.group)).toEqual([...groups.slice(5), 'f-mixed', ...groups.slice(0, 5)]);
    // In f-mixed the y-mine job outranks the b-mine one found first.
    expect(walk.groups.find((g) => g.group === 'f-mixed')!.next!.type).toBe('y-mine');
    expect(walk.groups.every((g) => g.next !== undefined)).toBe(true);
    if (db.dialect === 'sqlite') expect(sent.n).toBeLessThanOrEqual(bound(4 + GROUPS));
  });
});

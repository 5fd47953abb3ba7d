import { rotationCursorName } from '../../lib/claim/rotation-cursor';
import { handledPairAfter, nextReadyGroups, walkRotation } from '../../lib/claim/rotation.sql';
import { sql, type Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { readyGroups } from '../../lib/scheduler/ready-groups.sql';
import { describeDialects } from '../support/describe-dialects';
import { explainText, mysqlRowsRead } from '../support/plan-reads';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { placeRotationCursor } from '../support/rotation-cursor';

const OTHER_TYPES = 3_000;
const GROUPS = 20;
/** Groups of another worker's types alone (its tenants), between ours and one more of ours. */
const OTHER_GROUPS = 2_000;

/**
 * A worker's walk of the ready groups (the slot planner's look every 250 ms, and on SQLite the
 * rotation claim) stepped over the ready rows' (group, type) pairs one statement each, handled
 * or not. Beside a group holding 3,000 types another worker handles, every walk was 3,000
 * statements: on SQLite 34–64 ms of the event loop each (one dashboard overview took 26 s), on
 * MariaDB 1.2 s per planner look. The same held across groups: a group per tenant of another
 * service, 20,000 of them, was a planner look of 2 s on MariaDB and 150 ms elsewhere, and a
 * rotation claim of 0.5 s on MariaDB. Past a few of another worker's pairs in a row, the walk now
 * jumps to the next pair of a handled type, in the group or a later one: one index entry per
 * handled type (`jobs_ready_type_group_idx`).
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
    // After g19: 2,000 groups of one other type each (seven types between them), then ours again.
    await insert(Array.from({ length: OTHER_GROUPS }, (_, i) => ({ type: `tenant-${i % 7}`, group: `h${String(i).padStart(4, '0')}` })));
    await insert([{ type: 'mine', group: 'i-last' }]);
  }, 120_000);
  afterAll(() => app?.close());

  /**
   * What a walk costs, per dialect: statements sent (SQLite, where each is a turn of the event
   * loop), index and row reads (MySQL, `Handler_read*`), index scans started (PostgreSQL, whose
   * walk is one function call: each probe in it is one). Stepping pair by pair, each was over 3,000.
   */
  async function cost<T>(work: (on: SqlExecutor) => Promise<T>): Promise<{ result: T; cost: number }> {
    if (db.dialect === 'mysql') {
      const { result, read } = await mysqlRowsRead(app, work);
      return { result, cost: read };
    }
    return app.db.transaction(async (tx) => {
      const scans = async () => Number((await tx.run(sql`SELECT idx_scan FROM pg_stat_xact_user_tables WHERE relname = 'jobs'`)).rows[0]?.idx_scan ?? 0);
      const before = db.dialect === 'postgres' ? await scans() : 0;
      let sent = 0;
      const counting: SqlExecutor = {
        dialect: tx.dialect,
        run: (s: Sql) => {
          sent++;
          return tx.run(s);
        },
      };
      const result = await work(counting);
      return { result, cost: db.dialect === 'postgres' ? (await scans()) - before : sent };
    });
  }
  /** A few per group passed (per three handled types: a group's heads are read per type), none per other worker's type. */
  const bound = (groupsPassed: number, handledTypes = 3) => (db.dialect === 'mysql' ? 40 : 8) * groupsPassed * Math.ceil(handledTypes / 3);

  it("the planner's look finds the same groups at a cost per group, not per type", async () => {
    const { result: found, cost: spent } = await cost((on) => readyGroups(on, ['mine'], 11));
    expect(found.map((g) => g.group)).toEqual(groups.slice(0, 11));
    expect(spent).toBeLessThanOrEqual(bound(3 + 11));
    const both = await readyGroups(app.db, ['b-mine', 'y-mine', 'mine'], 3);
    expect(both.map((g) => g.group)).toEqual(['f-mixed', 'g00', 'g01']);
  });

  it(`passes ${OTHER_GROUPS.toLocaleString('en')} groups of another worker's types at a cost per group found`, async () => {
    // Every group of ours, the last one after the other worker's groups: the look walks them all.
    const { result: found, cost: spent } = await cost((on) => readyGroups(on, ['mine'], 30));
    expect(found.map((g) => g.group)).toEqual([...groups, 'i-last']);
    expect(spent).toBeLessThanOrEqual(bound(3 + GROUPS + 1));
    // A worker whose types have no ready rows (idle, beside the others' backlog): a few probes.
    const { result: none, cost: idle } = await cost((on) => readyGroups(on, ['nobody'], 11));
    expect(none).toEqual([]);
    expect(idle).toBeLessThanOrEqual(bound(4));
    // A walk from inside the other worker's groups, and one bounded below a group (a rotation's
    // wrapped pass): the bound holds on the jump too.
    expect((await nextReadyGroups(app.db, ['mine'], 'h0500', 5)).map((g) => g.group)).toEqual(['i-last']);
    expect(await nextReadyGroups(app.db, ['mine'], 'h0500', 5, 'h1999')).toEqual([]);
  });

  it('a rotation walk takes each group its best head, from the cursor and wrapped round below it', async () => {
    // MySQL has two walks: locking as it goes, and reading first, then locking the heads by id.
    // Also five types, two without ready rows: past four, SQLite reads which a group holds
    // instead of each type's head.
    const walks = [
      { types: ['b-mine', 'y-mine', 'mine'], readFloors: false },
      { types: ['b-mine', 'y-mine', 'mine'], readFloors: true },
      { types: ['b-mine', 'y-mine', 'mine', 'n-none', 'z-none'], readFloors: false },
    ];
    for (const { types, readFloors } of walks) {
      await placeRotationCursor(app.db, types, 'g05');
      const { result: walk, cost: spent } = await cost((on) => walkRotation(on, rotationCursorName(types), types, 30, [], readFloors));
      expect(walk.cursor.group).toBe('g05');
      expect(walk.groups.map((g) => g.group)).toEqual([...groups.slice(5), 'i-last', 'f-mixed', ...groups.slice(0, 5)]);
      // In f-mixed the y-mine job outranks the b-mine ones found first.
      expect(walk.groups.find((g) => g.group === 'f-mixed')!.next!.type).toBe('y-mine');
      expect(walk.groups.every((g) => g.next !== undefined)).toBe(true);
      expect(spent).toBeLessThanOrEqual(bound(3 + GROUPS + 1, types.length));
    }
  });

  it("a jump reads an index entry per handled type, not the group's backlog of one", async () => {
    const types = ['b-mine', 'y-mine', 'mine'];
    if (db.dialect === 'postgres') {
      // PostgreSQL jumps inside job_queue_ready_groups: from f-mixed's first pairs of other types,
      // over b-mine (not handled in this walk) to y-mine, then to g00. Each probe is one index
      // scan started; stepping would have started one per pair.
      const { result, cost: spent } = await cost((on) => nextReadyGroups(on, ['y-mine', 'mine'], 'f-mixed', 2));
      expect(result.map((g) => g.group)).toEqual(['f-mixed', 'g00']);
      expect(spent).toBeLessThanOrEqual(bound(3));
      return;
    }
    const jump = handledPairAfter(app.db.dialect, { group: 'f-mixed', type: 'a-3' }, types, undefined);
    expect((await app.db.run(jump)).rows.map((r) => [r.group_key, r.type])).toEqual([['f-mixed', 'b-mine']]);
    const last = handledPairAfter(app.db.dialect, { group: 'f-mixed', type: 'y-mine' }, types, undefined);
    expect((await app.db.run(last)).rows.map((r) => [r.group_key, r.type])).toEqual([['g00', 'mine']]);
    // Across the other worker's groups, and below a bound.
    const across = handledPairAfter(app.db.dialect, { group: 'h0000', type: 'tenant-0' }, types, undefined);
    expect((await app.db.run(across)).rows.map((r) => [r.group_key, r.type])).toEqual([['i-last', 'mine']]);
    expect((await app.db.run(handledPairAfter(app.db.dialect, { group: 'h0000', type: 'tenant-0' }, types, 'h1999'))).rows).toEqual([]);
    if (db.dialect === 'sqlite') {
      // Seeks that stop at their first entry: the group's handled types on the (group, type)
      // index (the IN list walked in index order), each type's next group on the (type, group) one.
      const plan = await explainText(app, 'EXPLAIN QUERY PLAN', jump);
      expect(plan).toMatch(/SEARCH jobs USING COVERING INDEX jobs_ready_group_idx \(group_key=\? AND type=\?\)/);
      expect(plan).toMatch(/SEARCH jobs USING COVERING INDEX jobs_ready_type_group_idx \(type=\? AND group_key>\?\)/);
      expect(plan).not.toMatch(/SCAN jobs/);
    }
    if (db.dialect === 'mysql') {
      for (const statement of [jump, last, across]) expect((await mysqlRowsRead(app, (tx) => tx.run(statement))).read).toBeLessThan(20);
    }
  });

});

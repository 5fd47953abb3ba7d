import { jobQueueMigrations } from '../../lib';
import type { Sql } from '../../lib/database/sql';
import { pausedStamp } from '../../lib/pause/pause.sql';
import { PausedWork } from '../../lib/pause/paused-work';
import { describeDialects } from '../support/describe-dialects';
import { insertPausedGroups } from '../support/number-rows';
import { explainText, pgStatementRowsScanned } from '../support/plan-reads';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * pause() and resume() read, in their transaction, what tells them whether their change is the
 * only one since this process read the entries. That was a count of every entry (rows written by
 * hand move no version): 35-40 ms of the server's time per call at 400,000 paused groups. Now a
 * counter that triggers move on every write of the table, read in one row (PostgreSQL and SQLite;
 * MySQL/MariaDB keep the count).
 */
describeDialects(
  'pause and resume beside 100,000 paused groups: a call reads what it changes',
  (db) => {
    let app: QueueApp;
    const ENTRIES = Number(process.env.PAUSE_STAMP_ENTRIES ?? 100_000);

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      for (let k = 0; k * 100_000 < ENTRIES; k++) await insertPausedGroups(app, Math.min(100_000, ENTRIES - k * 100_000), `tenant-${k}-`);
      await app.queue.pause({ group: 'first' }); // reads the rows written above
    }, 120_000);
    afterAll(() => app?.close());

    it('the stamp a call reads costs a few rows, not one per entry', async () => {
      const statements: Sql[] = [];
      const recorder = { dialect: app.db.dialect, run: (s: Sql) => (statements.push(s), app.db.run(s)) };
      await pausedStamp(recorder);
      expect(statements).toHaveLength(1);
      let read: number | string;
      if (db.dialect === 'postgres') read = await pgStatementRowsScanned(app, statements[0]);
      else read = await explainText(app, 'EXPLAIN QUERY PLAN', statements[0]);
      const pairs = 20;
      const t = performance.now();
      for (let i = 0; i < pairs; i++) {
        await app.queue.pause({ group: `extra-${i}` });
        await app.queue.resume({ group: `extra-${i}` });
      }
      process.stdout.write(`[${db.dialect}] beside ${ENTRIES} paused groups: stamp reads ${String(read)}; pause + resume ${((performance.now() - t) / pairs).toFixed(1)} ms\n`);
      // Before: every entry (PostgreSQL and MySQL rows read; SQLite a SCAN of the table's index).
      if (db.dialect === 'sqlite') expect(read).not.toMatch(/SCAN job_queue_paused/);
      else expect(read).toBeLessThanOrEqual(10);
    }, 120_000);

    it('rows written by hand are caught at the next call, one in and one out too (the count missed that)', async () => {
      const paused = app.module.get(PausedWork);
      const now = db.dialect === 'postgres' ? 'now()' : db.dialect === 'mysql' ? 'UTC_TIMESTAMP(3)' : `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
      await app.rows(`INSERT INTO job_queue_paused (kind, name, paused_at) VALUES ('group', 'by-hand', ${now})`);
      await app.rows(`DELETE FROM job_queue_paused WHERE kind = 'group' AND name = 'tenant-0-7'`);
      expect([paused.groups.has('by-hand'), paused.groups.has('tenant-0-7')]).toEqual([false, true]);
      await app.queue.pause({ group: 'x' });
      expect([paused.groups.has('by-hand'), paused.groups.has('tenant-0-7'), paused.groups.has('x')]).toEqual([true, false, true]);
      await app.queue.resume({ group: 'x' });
      expect(paused.groups.has('x')).toBe(false);
      expect(paused.groups.size).toBe(ENTRIES + 1); // 'first' and 'by-hand' in, 'tenant-0-7' out
    }, 60_000);

    it('an existing table upgrades in place: without the counter a call reads the entries, with it counts from there', async () => {
      const paused = app.module.get(PausedWork);
      const [migration] = jobQueueMigrations(db.dialect).filter((m) => m.name.startsWith('JobQueuePausedWrites'));
      const writes = async () => (await app.rows(`SELECT version FROM job_queue_versions WHERE name = 'paused_writes'`)).map((r) => Number(r.version));
      const runner = app.dataSource.createQueryRunner();
      try {
        await migration.down(runner);
        expect(await writes()).toEqual([]);
        // The previous version's schema (and a process of this one beside it): no counter, so each call reads the entries.
        await app.queue.pause({ group: 'during' });
        expect(paused.groups.has('during')).toBe(true);
        await migration.up(runner);
        expect(await writes()).toEqual([0]);
        await app.queue.resume({ group: 'during' });
        expect([await writes(), paused.groups.has('during')]).toEqual([[1], false]);
        const now = db.dialect === 'postgres' ? 'now()' : db.dialect === 'mysql' ? 'UTC_TIMESTAMP(3)' : `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
        await app.rows(`INSERT INTO job_queue_paused (kind, name, paused_at) VALUES ('group', 'by-hand-2', ${now})`);
        expect(await writes()).toEqual([2]);
        await app.queue.pause({ group: 'y' });
        expect([paused.groups.has('by-hand-2'), paused.groups.has('y')]).toEqual([true, true]);
        await app.queue.resume({ group: 'y' });
        await app.queue.resume({ group: 'by-hand-2' });
        expect(paused.groups.size).toBe(ENTRIES + 1);
      } finally {
        await runner.release();
      }
    }, 60_000);
  },
  // MySQL/MariaDB keep the count of the entries (a trigger there needs SUPER where binary logging is on; see pausedStamp).
  ['postgres', 'sqlite'],
);

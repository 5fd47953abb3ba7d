import { jest } from '@jest/globals';
import { Injectable, Logger } from '@nestjs/common';
import { JobHandler } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { SqlResult } from '../../lib/database/sql-executor';
import type { Sql } from '../../lib/database/sql';
import { PausedWork } from '../../lib/pause/paused-work';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

describeDialects('paused entries: read again only when they changed', (db) => {
  // Both apps are of this process, so each test's refreshes are b's alone: a is not a worker.
  let a: QueueApp;
  let b: QueueApp;

  beforeAll(async () => {
    a = await startQueueApp(db, { worker: false, externalTypes: ['mail'] });
    b = await startQueueApp(db, { worker: false, externalTypes: ['mail'] });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  /** b's refreshes while `work` runs that got the entries back (the others, the unchanged version alone). */
  async function entryReads(work: () => Promise<unknown>): Promise<number> {
    const run = jest.spyOn(b.module.get(JobQueueDatabase), 'run');
    try {
      await work();
      const refreshes = run.mock.calls.flatMap(([statement], i) => (/FROM job_queue_versions/.test((statement as Sql).render(db.dialect).text) ? [run.mock.results[i].value as Promise<SqlResult>] : []));
      return (await Promise.all(refreshes)).filter(({ rows }) => rows.some((r) => r.part === 'e')).length;
    } finally {
      run.mockRestore();
    }
  }

  it("another process's pause and resume are read at b's next refresh, and nothing is read while nothing changed", async () => {
    const paused = b.module.get(PausedWork);
    await a.rows(`DELETE FROM job_queue_paused`);
    await a.queue.resume({ group: 'nobody' }); // a change: b reads once more, then holds
    await paused.refresh();

    expect(await entryReads(async () => {
      for (let i = 0; i < 20; i++) await paused.refresh();
    })).toBe(0);

    await a.queue.pause({ group: 'acme' });
    expect(await entryReads(() => paused.refresh())).toBe(1);
    expect([...paused.groups]).toEqual(['acme']);
    // Names come back as the text they were paused with (MySQL types a UNION's columns from all its parts).
    await a.queue.pause({ group: 'zürich 😀' });
    await paused.refresh();
    expect([...paused.groups].sort()).toEqual(['acme', 'zürich 😀']);
    await a.queue.resume({ group: 'zürich 😀' });
    await paused.refresh();
    expect(await entryReads(() => paused.refresh())).toBe(0);

    await a.queue.pause({ type: 'mail' });
    await a.queue.resume({ group: 'acme' });
    expect(await entryReads(() => paused.refresh())).toBe(1);
    expect([[...paused.types], [...paused.groups]]).toEqual([['mail'], []]);
    await a.queue.resume({ type: 'mail' });
    await paused.refresh();
    expect(paused.any).toBe(false);
  });

  it('keeps one list of the paused groups until they change: claims name it without copying it', async () => {
    const paused = b.module.get(PausedWork);
    await a.queue.pause({ group: 'g1' });
    await paused.refresh();
    const list = paused.groupList;
    expect(list).toEqual(['g1']);
    await a.queue.pause({ type: 'mail' }); // a change, not of the groups
    await paused.refresh();
    await paused.refresh();
    expect(paused.groupList).toBe(list);
    await a.queue.pause({ group: 'g2' });
    await paused.refresh();
    expect(paused.groupList).not.toBe(list);
    expect([...paused.groupList].sort()).toEqual(['g1', 'g2']);
    for (const target of [{ group: 'g1' }, { group: 'g2' }, { type: 'mail' }]) await a.queue.resume(target);
    await paused.refresh();
    expect(paused.groupList).toEqual([]);
  });

  it('a write that bypasses pause()/resume() is read within fullReadEveryMs', async () => {
    const paused = b.module.get(PausedWork);
    const every = paused.fullReadEveryMs;
    paused.fullReadEveryMs = 400;
    try {
      await paused.refresh();
      const now = db.dialect === 'postgres' ? 'now()' : db.dialect === 'mysql' ? 'UTC_TIMESTAMP(3)' : `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
      await a.rows(`INSERT INTO job_queue_paused (kind, name, paused_at) VALUES ('group', 'by-hand', ${now})`);
      expect(await entryReads(() => paused.refresh())).toBe(0);
      expect(paused.groups.has('by-hand')).toBe(false);
      await new Promise((r) => setTimeout(r, 450));
      expect(await entryReads(() => paused.refresh())).toBe(1);
      expect(paused.groups.has('by-hand')).toBe(true);
    } finally {
      paused.fullReadEveryMs = every;
      await a.queue.resume({ group: 'by-hand' });
    }
  });

  it('a shutdown waits for a read of the entries in flight, which no longer fails against the closed connection', async () => {
    @Injectable()
    class Noop {
      @JobHandler('paused-refresh.noop')
      async run(): Promise<null> {
        return null;
      }
    }
    // A half-poll refresh every 10 ms; the next one is held 300 ms, across close().
    const worker = await startQueueApp(db, { pollIntervalMs: 20 }, [Noop]);
    const database = worker.module.get(JobQueueDatabase);
    const run = database.run.bind(database);
    let hold = false;
    let held = 0;
    jest.spyOn(database, 'run').mockImplementation(async (statement: Sql) => {
      if (hold && /FROM job_queue_versions/.test(statement.render(db.dialect).text)) {
        hold = false;
        held++;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      return run(statement);
    });
    const warnings: string[] = [];
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
    try {
      hold = true;
      while (!held) await new Promise((resolve) => setTimeout(resolve, 5));
      await worker.close();
      await new Promise((resolve) => setTimeout(resolve, 400)); // past the held read, had the close not waited
    } finally {
      warn.mockRestore();
    }
    expect(warnings.filter((w) => /paused/.test(w))).toEqual([]);
  });
});

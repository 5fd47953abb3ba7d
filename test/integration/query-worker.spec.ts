import { Injectable } from '@nestjs/common';
import { InvalidQueryError, JobHandler, type JobContext } from '../../lib';
import { sql } from '../../lib/database/sql';
import { findPageStatement } from '../../lib/query/find-jobs.sql';
import { normalizeFilter } from '../../lib/query/job-filter';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

/** Handlers that run until their job is cancelled (the abort signal): in flight as long as the test looks. */
@Injectable()
class Holders {
  static started = 0;
  static aborted = 0;

  @JobHandler('hold', { maxAttempts: 1 })
  async hold(_args: unknown, ctx: JobContext): Promise<void> {
    Holders.started++;
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    Holders.aborted++;
  }
}

const ROWS = 20_000;

describeDialects('find({ worker }): the jobs one worker holds now', (db) => {
  it('two workers: each one\'s leased and running jobs, nothing finished, pages, bulk cancel of one worker\'s jobs; read through the in-flight rows', async () => {
    const admin = await startQueueApp(db, { worker: false, externalTypes: ['hold', 'filler'] });
    const workers: QueueApp[] = [];
    try {
      // Settled rows in the held jobs' group, of a type the plan check below names too: the read must not walk them.
      const d = admin.db.dialect;
      const row = sql`('filler', '{}', 'done', 'held-g', ${d.now()}, ${d.now()}, ${d.now()}, ${d.now()})`;
      for (let i = 0; i < ROWS; i += 1_000) {
        await admin.db.run(sql`INSERT INTO jobs (type, args, state, group_key, run_after, created_at, updated_at, finished_at) VALUES ${sql.join(Array.from({ length: 1_000 }, () => row))}`);
      }
      const a = await startQueueApp(db, { workerId: 'find-w-a', concurrency: 3, pollIntervalMs: 100, leaseTtlMs: 3_000 }, [Holders]);
      workers.push(a);
      const started = Holders.started;
      const first = [];
      for (let i = 0; i < 3; i++) first.push((await admin.queue.enqueue({ type: 'hold', group: 'held-g' })).id);
      await eventually('worker a runs 3', async () => Holders.started === started + 3, 30_000, 50);
      const b = await startQueueApp(db, { workerId: 'find-w-b', concurrency: 2, pollIntervalMs: 100, leaseTtlMs: 3_000 }, [Holders]);
      workers.push(b);
      const second = [];
      for (let i = 0; i < 2; i++) second.push((await admin.queue.enqueue({ type: 'hold', group: 'held-g' })).id);
      await eventually('worker b runs 2', async () => Holders.started === started + 5, 30_000, 50);

      const ids = async (filter: Parameters<typeof admin.queue.find>[0], limit = 50) => {
        const out: number[] = [];
        let cursor: string | null = null;
        do {
          const page: Awaited<ReturnType<typeof admin.queue.find>> = await admin.queue.find(filter, { limit, cursor });
          out.push(...page.jobs.map((j) => j.id));
          cursor = page.nextCursor;
        } while (cursor);
        return out;
      };
      const newestFirst = (list: number[]) => [...list].sort((x, y) => y - x);
      expect(await ids({ worker: 'find-w-a' })).toEqual(newestFirst(first));
      expect(await ids({ worker: 'find-w-a' }, 1)).toEqual(newestFirst(first)); // one per page, by cursor
      expect(await ids({ worker: 'find-w-b', group: 'held-g', type: 'hold' })).toEqual(newestFirst(second));
      expect(await ids({ worker: 'find-w-b', state: 'running' })).toEqual(newestFirst(second));
      expect(await ids({ worker: 'find-w-a', state: ['done', 'failed'] })).toEqual([]);
      expect(await ids({ worker: 'nobody' })).toEqual([]);

      // The statement reads the in-flight rows, not the group's or the type's 20,000 settled ones.
      const plan = await explain(admin, { worker: 'find-w-a', group: 'held-g', type: 'filler' });
      if (db.dialect === 'postgres') expect(plan).toMatch(/jobs_in_flight_idx/);
      if (db.dialect === 'mysql') expect(plan).toMatch(/jobs_state_id_idx/);
      if (db.dialect === 'sqlite') expect(plan).toMatch(/jobs_in_flight_idx|jobs_state_id_idx/);

      // A wedged worker's jobs cancelled in one call: the other worker's run on.
      const aborted = Holders.aborted;
      expect(await admin.queue.cancelMany({ worker: 'find-w-a' })).toEqual({ count: 3 });
      for (const id of first) expect((await admin.queue.get(id))!.state).toBe('cancelled');
      await eventually('worker a\'s handlers aborted', async () => Holders.aborted === aborted + 3, 30_000, 50);
      expect(await ids({ worker: 'find-w-a' })).toEqual([]);
      expect(await ids({ worker: 'find-w-b' })).toEqual(newestFirst(second));
      expect(await admin.queue.cancelMany({ worker: 'find-w-b' })).toEqual({ count: 2 });
    } finally {
      for (const w of workers) await w.close();
      await admin.rows(`DELETE FROM jobs WHERE type IN ('filler', 'hold')`);
      await admin.close();
    }
  }, 120_000);

  it('a bad worker is InvalidQueryError and changes nothing', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['hold'] });
    try {
      const job = await app.queue.enqueue({ type: 'hold' });
      for (const worker of ['', 7, null, 'x'.repeat(129), 'a\u0000b', ['find-w-a']]) {
        await expect(app.queue.find({ worker } as never)).rejects.toThrow(InvalidQueryError);
        await expect(app.queue.cancelMany({ worker } as never)).rejects.toThrow(InvalidQueryError);
      }
      expect((await app.queue.get(job.id))!.state).toBe('ready');
      await app.queue.cancel(job.id);
    } finally {
      await app.close();
    }
  });
});

/** The plan of find's page statement, as text. */
async function explain(app: QueueApp, filter: Parameters<typeof normalizeFilter>[0]): Promise<string> {
  const d = app.db.dialect;
  const { text, params } = findPageStatement(d, normalizeFilter(filter), { beforeId: null }, 50).render(d.name);
  const prefix = d.name === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN';
  const rows = await app.dataSource.query(`${prefix} ${text}`, params);
  return JSON.stringify(rows);
}

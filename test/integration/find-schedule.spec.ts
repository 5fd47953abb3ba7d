import { Injectable } from '@nestjs/common';
import { InvalidQueryError, JobHandler, type JobFilter } from '../../lib';
import { sql, type Sql } from '../../lib/database/sql';
import { findPageStatement } from '../../lib/query/find-jobs.sql';
import { normalizeFilter } from '../../lib/query/job-filter';
import { slotKey } from '../../lib/recurring/slot-key';
import { describeDialects } from '../support/describe-dialects';
import { numbers } from '../support/number-rows';
import { explainText, findPageReads } from '../support/plan-reads';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

type Find = QueueApp['queue']['find'];

/** Every id a filter selects, page by page through the cursor. */
async function allIds(app: QueueApp, filter: Parameters<Find>[0], limit = 50): Promise<number[]> {
  const out: number[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<Find>> = await app.queue.find(filter, { limit, cursor });
    out.push(...page.jobs.map((j) => j.id));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** The ticker runs in worker processes: one with a handler for the schedule's type. */
@Injectable()
class Beats {
  @JobHandler('beat')
  async beat(): Promise<void> {}
}

const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n, 3));

describeDialects('find({ schedule }): the jobs one recurring schedule enqueued', (db) => {
  it('its slots newest first, not another schedule\'s whose name extends it, nor lookalike keys; pages, other filters, bulk actions; typed errors', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['report', 'other'] });
    try {
      const enqueue = async (key: string, type = 'report') => (await app.queue.enqueue({ type, key, args: {} })).id;
      const nightly: number[] = [];
      const eu: number[] = [];
      for (let n = 0; n < 7; n++) {
        nightly.push(await enqueue(slotKey('nightly', day(n))));
        // A schedule whose name starts with the other's and a colon: its keys start with `recurring:nightly:`.
        eu.push(await enqueue(slotKey('nightly:eu', day(n))));
      }
      // Keys that are not nightly's slots: other names, too short, no colon before the slot.
      await enqueue(slotKey('nightly2', day(0)));
      await enqueue(slotKey('nightl', day(1)));
      await enqueue('recurring:nightly');
      await enqueue('recurring:nightly:');
      await enqueue(`recurring:nightlyX${day(2).toISOString()}`);
      await enqueue(`app:nightly:${day(3).toISOString()}`);
      await app.queue.enqueue({ type: 'report', args: {} });
      const newestFirst = (ids: number[]) => [...ids].sort((a, b) => b - a);

      expect(await allIds(app, { schedule: 'nightly' })).toEqual(newestFirst(nightly));
      expect(await allIds(app, { schedule: 'nightly' }, 2)).toEqual(newestFirst(nightly)); // 4 pages by cursor
      expect(await allIds(app, { schedule: 'nightly:eu' }, 3)).toEqual(newestFirst(eu));
      expect(await allIds(app, { schedule: 'nightly', type: 'report' })).toEqual(newestFirst(nightly));
      expect(await allIds(app, { schedule: 'nightly', type: 'other' })).toEqual([]);
      expect(await allIds(app, { schedule: 'nobody' })).toEqual([]);
      const page = await app.queue.find({ schedule: 'nightly' }, { limit: 1 });
      expect(page.jobs[0].key).toBe(slotKey('nightly', day(6)));

      // The failed runs of one schedule, retried in one call; the other schedule's untouched.
      await app.queue.cancel(nightly[1]);
      await app.queue.cancel(nightly[4]);
      await app.queue.cancel(eu[4]);
      expect(await allIds(app, { schedule: 'nightly', state: 'cancelled' })).toEqual([nightly[4], nightly[1]]);
      expect(await app.queue.retryMany({ schedule: 'nightly', state: 'cancelled' })).toEqual({ count: 2 });
      expect(await allIds(app, { schedule: 'nightly', state: 'cancelled' })).toEqual([]);
      expect((await app.queue.get(eu[4]))!.state).toBe('cancelled');
      expect(await app.queue.cancelMany({ schedule: 'nightly:eu' })).toEqual({ count: 6 });

      // The page's statement reads the schedule's index, newest first, with no sort (PostgreSQL, SQLite).
      for (const filter of [{ schedule: 'nightly' }, { schedule: 'nightly', state: 'ready' }] as JobFilter[]) {
        const statement = findPageStatement(app.db.dialect, normalizeFilter(filter), { beforeId: null }, 50);
        if (db.dialect === 'sqlite') {
          const plan = await explainText(app, 'EXPLAIN QUERY PLAN', statement);
          expect(plan).toMatch(/USING INDEX jobs_find_schedule_idx/);
          expect(plan).not.toMatch(/TEMP B-TREE/);
        } else {
          const plan = await explainText(app, 'EXPLAIN', statement);
          expect(plan).toMatch(db.dialect === 'postgres' ? /jobs_find_schedule_idx/ : /jobs_job_key_uq/);
        }
      }

      // Bad names: a typed error, nothing read or changed.
      for (const bad of ['', 'with space', 'x'.repeat(221), 'nul\u0000', 42, null, ['nightly']]) {
        await expect(app.queue.find({ schedule: bad } as unknown as JobFilter)).rejects.toThrow(InvalidQueryError);
        await expect(app.queue.cancelMany({ schedule: bad } as unknown as JobFilter)).rejects.toThrow(InvalidQueryError);
      }
      await expect(app.queue.find({ schedule: 'with space' })).rejects.toThrow(/schedule/);
      expect(await allIds(app, { schedule: 'nightly', state: 'ready' })).toHaveLength(7);
    } finally {
      await app.close();
    }
  });

  it('a schedule that fires every second: the ticker\'s slot jobs are the ones find({ schedule }) lists; a run now is not a slot', async () => {
    const app = await startQueueApp(db, { pollIntervalMs: 100 }, [Beats]);
    try {
      await app.queue.schedule({ name: 'beat.find', type: 'beat', cron: '* * * * * *', args: { n: 1 } });
      await eventually('two slots enqueued', async () => (await app.count(`type = 'beat'`)) >= 2, 30_000, 100);
      await app.queue.unschedule('beat.find');
      const manual = await app.queue.enqueue({ type: 'beat', args: { manual: true } });
      const slots = (await app.rows(`SELECT id FROM jobs WHERE type = 'beat' AND job_key IS NOT NULL ORDER BY id DESC`)).map((r) => Number(r.id));
      expect(slots.length).toBeGreaterThanOrEqual(2);
      const found = await app.queue.find({ schedule: 'beat.find' });
      expect(found.jobs.map((j) => j.id)).toEqual(slots);
      expect(found.jobs.map((j) => j.id)).not.toContain(manual.id);
      for (const job of found.jobs) expect(job.key).toBe(slotKey('beat.find', new Date((job.args as { slot: string }).slot)));
    } finally {
      await app.close();
    }
  });
});

const BIG = 100_000;
const SMALL = 120;
const OTHERS = 500;
const PAGE = 50;
/** Rows a page of PAGE may read: its PAGE + 1 rows, and as many again of slack. */
const READ_BOUND = 2 * (PAGE + 1);

/** One find page (below `before`) and the rows the server read for it (none counted on SQLite). */
const pageReads = (app: QueueApp, filter: JobFilter, before: number | null) => findPageReads(app, filter, before, PAGE);

describeDialects('find({ schedule }) at scale: 100,000 runs of one schedule among 500 others and 100,000 plain jobs', (db) => {
  it('a page of the big schedule and of a small one reads about its own rows (PostgreSQL, SQLite); MariaDB reads the schedule\'s keys', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
    try {
      const d = app.db.dialect;
      const concat = (...parts: Sql[]) => (d.name === 'mysql' ? sql`CONCAT(${sql.join(parts, ', ')})` : sql.join(parts, ' || '));
      // A slot tail of 24 characters: the key's length and its colon are what the filter reads.
      const tail = d.name === 'postgres' ? sql`lpad(i::text, 24, '0')` : d.name === 'mysql' ? sql`LPAD(i, 24, '0')` : sql`substr('000000000000000000000000' || i, -24, 24)`;
      const insert = (key: Sql, n: number, state = 'done') =>
        app.db.run(
          sql`INSERT INTO jobs (type, args, state, job_key, run_after, created_at, updated_at, finished_at) SELECT 't', '{}', ${state}, ${key}, ${d.now()}, ${d.now()}, ${d.now()}, ${d.now()} FROM ${numbers(app, n)}`,
        );
      // The small schedule's runs first, so the big one's 100,000 are all newer.
      await insert(concat(sql`'recurring:small:'`, tail), SMALL);
      await insert(concat(sql`'recurring:big:'`, tail), BIG);
      // 500 schedules of 100 runs each, `big:0` … `big:499` among them (their keys start with `recurring:big:`).
      const other = d.name === 'mysql' ? sql`CONCAT('recurring:big:', i % ${sql.raw(String(OTHERS))}, ':', LPAD(i, 24, '0'))` : concat(sql`'recurring:big:'`, sql`${sql.raw(`(i % ${OTHERS})`)}`, sql`':'`, tail);
      await insert(other, OTHERS * 100);
      await insert(sql`NULL`, 100_000);
      await app.rows(d.name === 'postgres' ? 'VACUUM ANALYZE jobs' : d.name === 'mysql' ? 'ANALYZE TABLE jobs' : 'ANALYZE');

      const newest = async (prefix: string, below = Number.MAX_SAFE_INTEGER) =>
        (
          await app.rows(
            `SELECT id FROM jobs WHERE job_key LIKE '${prefix}%' AND ${d.name === 'mysql' ? 'CHAR_LENGTH' : 'length'}(job_key) = ${prefix.length + 24} AND id < ${below} ORDER BY id DESC LIMIT ${PAGE}`,
          )
        ).map((r) => Number(r.id));
      const reads: Record<string, unknown> = {};
      for (const name of ['big', 'small', 'big:7']) {
        const first = await pageReads(app, { schedule: name }, null);
        expect(first.ids).toEqual(await newest(`recurring:${name}:`));
        expect(first.ids).toHaveLength(PAGE);
        const next = await pageReads(app, { schedule: name }, first.next);
        expect(next.ids).toEqual(await newest(`recurring:${name}:`, first.next!));
        reads[name] = [first.read, next.read];
      }
      if (db.dialect === 'postgres') {
        // The first page of `small` walked none of big's newer 100,000 runs, nor the plain jobs.
        expect(Object.entries(reads).filter(([, r]) => (r as number[]).some((n) => n > READ_BOUND))).toEqual([]);
      }
      if (db.dialect === 'mysql') {
        // The key index over the range of keys that start with the schedule's: a page of `big` reads
        // its 100,000 runs (measured 100,052) and sorts them; `small` reads its 120 (172), never the table.
        const [small] = reads.small as number[];
        expect(small).toBeLessThanOrEqual(READ_BOUND + SMALL);
        const [big] = reads.big as number[];
        expect(big).toBeLessThanOrEqual(BIG + OTHERS * 100 + READ_BOUND);
      }
      if (db.dialect === 'sqlite') {
        for (const name of ['big', 'small']) {
          const plan = await explainText(app, 'EXPLAIN QUERY PLAN', findPageStatement(d, normalizeFilter({ schedule: name }), { beforeId: null }, PAGE));
          expect(plan).toMatch(/USING INDEX jobs_find_schedule_idx/);
          expect(plan).not.toMatch(/TEMP B-TREE/);
        }
      }
    } finally {
      await app.close();
    }
  }, 300_000);
});

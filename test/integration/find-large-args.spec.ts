import { jest } from '@jest/globals';
import type { FindResult } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { Sql } from '../../lib/database/sql';
import { SQLITE_SCAN_SLICE_BYTES } from '../../lib/query/find-jobs.sql';
import { MAX_FIND_PAGE_BYTES } from '../../lib/query/read-page';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

const JOBS = 300;
const PAD = 50_000; // 15 MB of args in all: several SQLite slices
const LIMIT = 200; // a page of every row needs 201 rows, about 10 MB

/**
 * argsContains is checked row by row where no index serves it (MySQL/MariaDB, SQLite). SQLite
 * runs the statement on the event loop: one statement over a window of large args held the
 * worker's handlers, heartbeats and requests for seconds. There the window is read in slices
 * of bounded bytes; the pages must be the same as one statement's.
 */
describeDialects('find with argsContains over large args', (db) => {
  let app: QueueApp;
  let ids: number[] = []; // enqueue order: n = index

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['win', 'other', 'huge'] });
    await resetTables(app);
    const pad = 'x'.repeat(PAD);
    for (let from = 0; from < JOBS; from += 25) {
      const nodes = Array.from({ length: 25 }, (_, k) => ({ ref: `n${from + k}`, type: 'win', args: { n: from + k, even: (from + k) % 2 === 0, all: true, pad } }));
      const refs = await app.queue.enqueueGraph(nodes);
      ids.push(...nodes.map((node) => refs[node.ref]));
      // Rows the type filter leaves out, between the others' ids.
      await app.queue.enqueue({ type: 'other', args: { even: true, all: true, pad } });
    }
  }, 120_000);
  afterAll(() => app?.close());

  async function pages(filter: Parameters<QueueApp['queue']['find']>[0], limit: number): Promise<number[][]> {
    const out: number[][] = [];
    let cursor: string | null = null;
    do {
      const page: FindResult = await app.queue.find(filter, { limit, cursor });
      out.push(page.jobs.map((j) => j.id));
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  it('pages through every match newest first, no job twice, none missed', async () => {
    const even = ids.filter((_, n) => n % 2 === 0).reverse();
    const found = await pages({ type: 'win', argsContains: { even: true } }, 40);
    expect(found.flat()).toEqual(even);
    expect(found.slice(0, -1).every((p) => p.length === 40)).toBe(true);

    const all = await pages({ type: 'win', argsContains: { all: true } }, LIMIT);
    expect(all.map((p) => p.length)).toEqual([LIMIT, JOBS - LIMIT]);
    expect(all.flat()).toEqual([...ids].reverse());
    expect(await pages({ type: 'win', argsContains: { n: 7 } }, 10)).toEqual([[ids[7]]]);
  }, 60_000);

  it(`a page holds at most ${MAX_FIND_PAGE_BYTES / 1024 / 1024} MB of args, the cursor going on from its last job; small rows take one statement`, async () => {
    // 80 jobs of 1 MB args, written by the server rather than sent.
    const refs = await app.queue.enqueueGraph(Array.from({ length: 80 }, (_, k) => ({ ref: `h${k}`, type: 'huge', args: { k } })));
    const huge = Array.from({ length: 80 }, (_, k) => refs[`h${k}`]);
    const pad = { postgres: `repeat('x', 1000000)`, mysql: `REPEAT('x', 1000000)`, sqlite: `printf('%.*c', 1000000, 'x')` }[db.dialect];
    const json = db.dialect === 'mysql' ? `CONCAT('{"pad":"', ${pad}, '"}')` : `'{"pad":"' || ${pad} || '"}'`;
    await app.rows(`UPDATE jobs SET args = ${json} WHERE type = 'huge'`);
    const seen: number[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const page: FindResult = await app.queue.find({ type: 'huge' }, { limit: 100, cursor });
      seen.push(...page.jobs.map((j) => j.id));
      sizes.push(page.jobs.length);
      for (const j of page.jobs) expect((j.args as { pad: string }).pad).toHaveLength(1_000_000);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...huge].reverse());
    expect(sizes[0]).toBeLessThanOrEqual(Math.ceil(MAX_FIND_PAGE_BYTES / 1_000_010));
    expect(sizes.length).toBe(2);

    // Rows of 50 KB: the page and their values in one statement.
    const run = jest.spyOn(app.module.get(JobQueueDatabase), 'run');
    try {
      expect((await app.queue.find({ type: 'win' }, { limit: 200 })).jobs).toHaveLength(200);
      expect(run).toHaveBeenCalledTimes(1);
    } finally {
      run.mockRestore();
    }
    await app.rows(`DELETE FROM jobs WHERE type = 'huge'`);
  }, 60_000);

  if (db.dialect === 'sqlite') {
    it('SQLite reads the window in slices of bounded bytes, and only as many as the page needs', async () => {
      const run = jest.spyOn(app.module.get(JobQueueDatabase), 'run');
      try {
        const page = await app.queue.find({ type: 'win', argsContains: { even: true } }, { limit: LIMIT });
        expect(page.jobs).toHaveLength(JOBS / 2);
        const scans = run.mock.calls.map(([s]) => (s as Sql).render('sqlite')).filter(({ text }) => text.includes('json_type('));
        let covered = 0;
        for (const { text, params } of scans) {
          const at = text.slice(0, text.indexOf('id >= ?')).split('?').length - 1;
          const [lo, hi] = [params[at], params[at + 1]];
          const [r] = await app.rows(`SELECT COUNT(*) AS n, SUM(octet_length(args)) AS bytes, MAX(octet_length(args)) AS top FROM jobs WHERE type = 'win' AND id >= ? AND id <= ?`, [lo, hi]);
          expect(Number(r.bytes)).toBeLessThanOrEqual(SQLITE_SCAN_SLICE_BYTES + Number(r.top));
          covered += Number(r.n);
        }
        // Every row once: 15 MB in slices of about 4 MB.
        expect(covered).toBe(JOBS);
        expect(scans.length).toBeGreaterThanOrEqual(Math.ceil((JOBS * PAD) / (SQLITE_SCAN_SLICE_BYTES + PAD)));
        run.mockClear();

        // A page of every row needs 201 of them: the slices past those are not read.
        expect((await app.queue.find({ type: 'win', argsContains: { all: true } }, { limit: LIMIT })).jobs).toHaveLength(LIMIT);
        const needed = Math.ceil(((LIMIT + 1) * PAD) / SQLITE_SCAN_SLICE_BYTES);
        const read = run.mock.calls.filter(([s]) => (s as Sql).render('sqlite').text.includes('json_type(')).length;
        expect(read).toBeLessThanOrEqual(needed + 1);
        expect(read).toBeLessThan(Math.ceil((JOBS * PAD) / SQLITE_SCAN_SLICE_BYTES));
      } finally {
        run.mockRestore();
      }
    }, 60_000);
  }
});

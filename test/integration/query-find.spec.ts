import { InvalidCursorError, InvalidQueryError, jobQueueMigrations, type JobFilter, type JobQueueService } from '../../lib';
import { sql, type Sql } from '../../lib/database/sql';
import { findPageStatement, SCAN_WINDOW } from '../../lib/query/find-jobs.sql';
import { normalizeFilter } from '../../lib/query/job-filter';
import { readPage } from '../../lib/query/read-page';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

const TYPES = ['a', 'b', 'c'];
// leased and running rows are read through another index than the rest on PostgreSQL (migration 12).
const STATES = ['ready', 'done', 'failed', 'cancelled', 'waiting', 'running', 'leased'] as const;
const BASE = Date.UTC(2026, 0, 1);

interface Seeded {
  id: number;
  type: string;
  group: string;
  state: string;
  key: string | null;
  parentId: number | null;
  args: Record<string, unknown>;
  lastError: string | null;
  createdAt: number;
  worker?: string | null;
}

/** PostgreSQL's `@>` on objects and arrays of scalars: the oracle of argsContains. */
function contains(value: unknown, filter: unknown): boolean {
  if (Array.isArray(filter)) return Array.isArray(value) && filter.every((f) => value.some((v) => v === f));
  if (filter !== null && typeof filter === 'object') {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
    return Object.entries(filter).every(([k, f]) => k in (value as object) && contains((value as Record<string, unknown>)[k], f));
  }
  return value === filter;
}

function matches(job: Seeded, f: JobFilter): boolean {
  const list = <T>(v: T | readonly T[] | undefined) => (v === undefined ? undefined : ([] as T[]).concat(v as T));
  if (f.state !== undefined && !list(f.state)!.includes(job.state as never)) return false;
  if (f.type !== undefined && !list(f.type)!.includes(job.type)) return false;
  if (f.group !== undefined && job.group !== f.group) return false;
  if (f.key !== undefined && job.key !== f.key) return false;
  if (f.parentId !== undefined && job.parentId !== f.parentId) return false;
  if (f.argsContains !== undefined && !contains(job.args, f.argsContains)) return false;
  if (f.errorContains !== undefined && !(job.lastError ?? '').includes(f.errorContains)) return false;
  if (f.createdAfter !== undefined && !(job.createdAt >= new Date(f.createdAfter).getTime())) return false;
  if (f.createdBefore !== undefined && !(job.createdAt < new Date(f.createdBefore).getTime())) return false;
  if (f.worker !== undefined && job.worker !== f.worker) return false;
  return true;
}

async function all(queue: JobQueueService, filter: JobFilter, limit: number): Promise<{ ids: number[]; pages: number }> {
  const ids: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Awaited<ReturnType<JobQueueService['find']>> = await queue.find(filter, { limit, cursor });
    expect(page.jobs.length).toBeLessThanOrEqual(limit);
    ids.push(...page.jobs.map((j) => j.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { ids, pages };
}

const at = (minutes: number) => new Date(BASE + minutes * 60_000);

const FILTERS: JobFilter[] = [
  {},
  { state: 'failed' },
  { state: ['failed', 'cancelled'] },
  { type: 'a' },
  { type: ['a', 'b'], state: 'ready' },
  { group: 'g1' },
  { group: 'g2', state: 'done', type: 'c' },
  { argsContains: { tenant: 't1' } },
  { argsContains: { nested: { k: 2 } }, type: 'b' },
  { argsContains: { tags: ['x'] } },
  { argsContains: { tags: ['y', 'x'] }, state: ['done', 'ready'] },
  { argsContains: { flag: true } },
  { argsContains: { flag: false, tenant: 't2' } },
  { argsContains: { tenant: 't1', n: 5 } },
  { argsContains: { nested: {} } },
  { argsContains: { none: null } },
  { argsContains: {} },
  { errorContains: 'timeout' },
  { errorContains: 'timeout', group: 'g1' },
  { errorContains: 'Timeout' },
  { createdAfter: at(100) },
  { createdBefore: at(50).toISOString(), state: 'done' },
  { createdAfter: at(20), createdBefore: at(90), argsContains: { tenant: 't3' } },
  { key: 'key-17' },
  { state: 'ready', type: 'nope' },
  { state: 'running' },
  { state: ['leased', 'failed'] },
  { type: 'a', state: ['running', 'done'] },
  { group: 'g2', argsContains: { tags: ['x'] } },
  { worker: 'w-a' },
  { worker: 'w-b', type: 'a' },
  { worker: 'w-a', state: ['running', 'done'] },
  { worker: 'w-b', group: 'g1', argsContains: { tenant: 't0' } },
  { worker: 'w-a', errorContains: 'timeout' },
  { worker: 'nobody' },
];

describeDialects('find: every filter, keyset pages, typed errors', (db) => {
  let app: QueueApp;
  let seeded: Seeded[] = [];

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: [...TYPES, 'container-child'] });
    await resetTables(app);
    const d = app.db.dialect;
    const ids = await app.queue.enqueueGraph(
      Array.from({ length: 150 }, (_, i) => ({
        ref: `j${i}`,
        type: TYPES[i % 3],
        group: i % 2 ? 'g2' : 'g1',
        key: i % 10 === 7 ? `key-${i}` : undefined,
        args: { tenant: `t${i % 4}`, n: i, tags: i % 2 ? ['x', 'y'] : ['y'], flag: i % 3 === 0, nested: { k: i % 5 }, ...(i % 7 === 0 ? { none: null } : {}) },
      })),
    );
    const container = await app.queue.enqueueGraph([
      { ref: 'box', type: 'batch' },
      ...Array.from({ length: 6 }, (_, i) => ({ ref: `c${i}`, type: 'container-child', parent: 'box', args: { n: 1_000 + i } })),
    ]);
    seeded = [];
    for (let i = 0; i < 150; i++) {
      const id = ids[`j${i}`];
      const state = STATES[i % STATES.length];
      const lastError = state === 'failed' ? `boom: ${i % 2 ? 'timeout after 5 s' : 'crash'}` : null;
      // In-flight rows are held by one of two workers; no other row has a lease owner.
      const worker = state === 'leased' || state === 'running' ? (i % 3 ? 'w-a' : 'w-b') : null;
      await app.db.run(sql`UPDATE jobs SET state = ${state}, last_error = ${lastError}, lease_owner = ${worker}, created_at = ${d.timeParam(at(i))} WHERE id = ${id}`);
      seeded.push({
        id, type: TYPES[i % 3], group: i % 2 ? 'g2' : 'g1', state, key: i % 10 === 7 ? `key-${i}` : null, parentId: null, lastError, worker,
        args: { tenant: `t${i % 4}`, n: i, tags: i % 2 ? ['x', 'y'] : ['y'], flag: i % 3 === 0, nested: { k: i % 5 }, ...(i % 7 === 0 ? { none: null } : {}) },
        createdAt: at(i).getTime(),
      });
    }
    const boxChildren = Object.entries(container).filter(([ref]) => ref.startsWith('c')).map(([, id]) => id);
    for (const [ref, id] of Object.entries(container)) {
      const job = (await app.queue.get(id))!;
      seeded.push({ id, type: job.type, group: job.group, state: job.state, key: null, parentId: job.parentId, lastError: null, args: job.args as Record<string, unknown>, createdAt: job.createdAt.getTime() });
      void ref;
    }
    expect(boxChildren).toHaveLength(6);
    FILTERS.push({ parentId: container.box }, { parentId: container.box, argsContains: { n: 1_003 } });
  });
  afterAll(() => app?.close());

  it('each filter and combination returns exactly the matching jobs, newest first, across pages', async () => {
    for (const filter of FILTERS) {
      const expected = seeded.filter((j) => matches(j, filter)).map((j) => j.id).sort((a, b) => b - a);
      for (const limit of [7, 500]) {
        const { ids, pages } = await all(app.queue, filter, limit);
        expect({ filter, limit, ids }).toEqual({ filter, limit, ids: expected });
        if (limit === 7) expect({ filter, pages }).toEqual({ filter, pages: Math.max(1, Math.ceil(expected.length / 7)) });
      }
    }
  });

  it('returns the job view: camelCase fields, parsed args', async () => {
    const { jobs } = await app.queue.find({ key: 'key-17' });
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ key: 'key-17', type: TYPES[17 % 3], group: 'g2', args: { n: 17 }, createdAt: at(17) });
  });

  it('bad input gets InvalidQueryError and reads nothing', async () => {
    const bad: Array<[unknown, unknown]> = [
      [{ colour: 'red' }, {}],
      [{ state: 'finished' }, {}],
      [{ argsContains: ['tenant'] }, {}],
      [{ argsContains: 'tenant=acme' }, {}],
      [{}, { limit: 0 }],
      [{}, { limit: 10_000 }],
      [{}, { cursor: 'forged' }],
      // NUL and unpaired surrogates: PostgreSQL's driver or server failed the statement (a raw
      // DatabaseError, a 500 on the dashboard) where MySQL and SQLite answered.
      [{ type: 'a\u0000b' }, {}],
      [{ type: ['a', '\ud800'] }, {}],
      [{ group: 'g\u0000' }, {}],
      [{ key: '\udc00key' }, {}],
      [{ errorContains: 'boom\u0000' }, {}],
      [{ argsContains: { tenant: 't1\u0000' } }, {}],
      [{ argsContains: { tags: ['x', '\ud800'] } }, {}],
      [{ argsContains: { ['\ud83d']: 1 } }, {}],
    ];
    for (const [filter, options] of bad) {
      await expect(app.queue.find(filter as JobFilter, options as never)).rejects.toBeInstanceOf(InvalidQueryError);
    }
    const first = await app.queue.find({ state: 'done' }, { limit: 2 });
    expect(first.nextCursor).toEqual(expect.any(String));
    // A cursor of one filter is refused by another (a foreign cursor), and an edited one too.
    await expect(app.queue.find({ state: 'failed' }, { cursor: first.nextCursor })).rejects.toBeInstanceOf(InvalidCursorError);
    const raw = Buffer.from(first.nextCursor!, 'base64url').toString();
    const edited = Buffer.from(raw.replace(/^1\.(\d+)/, (_, id) => `1.${Number(id) + 1}`)).toString('base64url');
    await expect(app.queue.find({ state: 'done' }, { cursor: edited })).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('paging across concurrent inserts: no duplicates, no gaps', async () => {
    const filter: JobFilter = { type: 'a' };
    const before = new Set(seeded.filter((j) => j.type === 'a').map((j) => j.id));
    let inserting = true;
    const inserts = (async () => {
      let n = 0;
      while (inserting) {
        await app.queue.enqueueGraph(Array.from({ length: 5 }, (_, i) => ({ ref: `n${i}`, type: 'a', args: { live: n } })));
        n++;
        await new Promise((r) => setTimeout(r, 2)); // SQLite resolves in microtasks: let timers run
      }
      return n;
    })();
    const seen: number[] = [];
    let cursor: string | null = null;
    let first = true;
    let top = 0;
    do {
      const page: Awaited<ReturnType<JobQueueService['find']>> = await app.queue.find(filter, { limit: 3, cursor });
      if (first) top = page.jobs[0].id;
      first = false;
      seen.push(...page.jobs.map((j) => j.id));
      cursor = page.nextCursor;
      await new Promise((r) => setTimeout(r, 5)); // let inserts land between pages
    } while (cursor);
    inserting = false;
    expect(await inserts).toBeGreaterThan(0);
    expect(new Set(seen).size).toBe(seen.length);
    // Every job that existed when paging began is there, plus only jobs newer than that were seen on page 1.
    const missing = [...before].filter((id) => !seen.includes(id));
    expect(missing).toEqual([]);
    expect(seen.filter((id) => !before.has(id)).every((id) => id <= top)).toBe(true);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);
  });

  it(`a scanned filter (errorContains) pages through more than one window of ${SCAN_WINDOW} rows`, async () => {
    const total = SCAN_WINDOW + 2_500;
    const marker = `needle-${db.dialect}`;
    for (let i = 0; i < total; i += 1_000) {
      const n = Math.min(1_000, total - i);
      await app.queue.enqueueGraph(Array.from({ length: n }, (_, k) => ({ ref: `w${k}`, type: 'b', args: { w: i + k } })));
    }
    // Needles at both ends and the middle of the 12,500 new rows.
    const { rows } = await app.db.run(sql`SELECT id FROM jobs WHERE type = 'b' ORDER BY id DESC LIMIT ${total}`);
    const newIds = rows.map((r) => Number(r.id));
    const needles = [newIds[0], newIds[SCAN_WINDOW - 1], newIds[SCAN_WINDOW], newIds[total - 1]];
    for (const id of needles) await app.db.run(sql`UPDATE jobs SET last_error = ${`${marker} in ${id}`} WHERE id = ${id}`);
    const { ids, pages } = await all(app.queue, { errorContains: marker, type: 'b' }, 50);
    expect(ids).toEqual([...needles].sort((a, b) => b - a));
    expect(pages).toBeGreaterThanOrEqual(2);
    // argsContains: a value rare among the newest rows (PostgreSQL reads it through the GIN index) and
    // one every row has (read within the probed range), both paged to the end.
    const argsPaged = await all(app.queue, { argsContains: { w: 3 }, type: 'b' }, 50);
    expect(argsPaged.ids).toHaveLength(1);
    const everyB = await all(app.queue, { type: 'b' }, 500);
    const everyBByArgs = await all(app.queue, { argsContains: {}, type: 'b' }, 500);
    expect(everyBByArgs.ids).toEqual(everyB.ids);
  });
});

describeDialects(
  'find on PostgreSQL: partial find indexes, and in-flight rows through jobs_in_flight_idx',
  (db) => {

    it('an existing table upgrades in place (version 11 with rows → 12), and find() plans use the indexes', async () => {
      const app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      try {
        const ids = await app.queue.enqueueGraph(Array.from({ length: 200 }, (_, i) => ({ ref: `r${i}`, type: 't', group: `g${i % 4}`, args: { tenant: `t${i % 10}` } })));
        await app.rows(`UPDATE jobs SET state = 'running' WHERE id IN (${[3, 13, 23].map((i) => ids[`r${i}`]).join(',')})`);
        const runner = app.dataSource.createQueryRunner();
        try {
          // Back to the full indexes of migration 9, rows kept; then up again, in place.
          const [indexes] = jobQueueMigrations('postgres').filter((m) => m.version === 12);
          await indexes.down(runner);
          expect(await app.rows(`SELECT 1 FROM pg_indexes WHERE indexname = 'jobs_find_args_idx'`)).toHaveLength(0);
          expect(await app.rows(`SELECT 1 FROM pg_indexes WHERE indexname = 'jobs_args_gin_idx'`)).toHaveLength(1);
          await indexes.up(runner);
          expect(await app.rows(`SELECT 1 FROM pg_indexes WHERE indexname = 'jobs_args_gin_idx'`)).toHaveLength(0);
          expect(await app.count()).toBe(200);
          const plan = async (filter: JobFilter) => {
            const { text, params } = findPageStatement(app.db.dialect, normalizeFilter(filter), { beforeId: null }, 50).render('postgres');
            await runner.query('BEGIN');
            await runner.query('SET LOCAL enable_seqscan = off');
            const rows = await runner.query(`EXPLAIN ${text}`, params);
            await runner.query('ROLLBACK');
            return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
          };
          // A filter over every state reads both branches, each from its index.
          const both = await plan({ argsContains: { tenant: 't3' } });
          expect(both).toMatch(/jobs_find_args_idx/);
          expect(both).toMatch(/jobs_in_flight_idx/);
          expect(await plan({ state: 'failed', group: 'g1' })).not.toMatch(/jobs_in_flight_idx/);
          expect(await plan({ type: 't' })).toMatch(/jobs_find_type_idx/);
          expect(await plan({ state: 'running' })).toMatch(/jobs_in_flight_idx/);
          // A worker's jobs: the in-flight branch alone, whatever else the filter names.
          const held = await plan({ worker: 'w-a', group: 'g1', type: 't' });
          expect(held).toMatch(/jobs_in_flight_idx/);
          expect(held).not.toMatch(/jobs_find_(group|type)_idx/);
        } finally {
          await runner.release();
        }
        const { jobs } = await app.queue.find({ argsContains: { tenant: 't3' } }, { limit: 500 });
        expect(jobs.map((j) => j.id)).toEqual(Array.from({ length: 20 }, (_, k) => ids[`r${193 - k * 10}`]));
        expect(jobs.filter((j) => j.state === 'running')).toHaveLength(3);
      } finally {
        await app.close();
      }
    });
    // After the upgrade spec, which counts its own 200 rows.
    it('argsContains reads a rare value through the GIN index and a common one near the top, not the whole table (200,000 rows)', async () => {
      const app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      try {
        const ROWS = 200_000;
        await app.rows(
          `INSERT INTO jobs (type, args, state, group_key, finished_at) SELECT 't', '{"tenant":"t' || (g % 1000) || '","n":' || g || ',"all":1}', 'done', 'g' || (g % 10), now() FROM generate_series(1, ${ROWS}) g`,
        );
        await app.rows(`VACUUM ANALYZE jobs`);
        // Every statement find() runs, then each one's EXPLAIN (ANALYZE, BUFFERS): pages read, whatever the machine's speed.
        const pagesRead = async (filter: JobFilter, limit: number) => {
          const statements: { text: string; params: unknown[] }[] = [];
          const recorder = { dialect: app.db.dialect, run: (s: Sql) => (statements.push(s.render('postgres')), app.db.run(s)) };
          const page = await readPage(recorder, normalizeFilter(filter), null, limit);
          let buffers = 0;
          for (const { text, params } of statements) {
            const [row] = await app.dataSource.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params);
            const plan = row['QUERY PLAN'][0].Plan;
            buffers += plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
          }
          return { rows: page.rows.length, buffers, statements: statements.length };
        };
        const heapPages = Number((await app.rows(`SELECT relpages FROM pg_class WHERE relname = 'jobs'`))[0].relpages);
        // One job in 200,000: the walk newest first read every page; the GIN finds it at once.
        const rare = await pagesRead({ argsContains: { n: 12_345 } }, 50);
        expect(rare.rows).toBe(1);
        expect(rare.buffers).toBeLessThan(heapPages / 20);
        // One in 1,000 (a tenant): 200 matches, each on its own page at most.
        const tenant = await pagesRead({ argsContains: { tenant: 't42' }, group: 'g2' }, 50);
        expect(tenant.rows).toBe(50);
        expect(tenant.buffers).toBeLessThan(heapPages / 5);
        // Every row: the page comes from the newest rows the probe read.
        const common = await pagesRead({ argsContains: { all: 1 } }, 50);
        expect(common.rows).toBe(50);
        expect(common.buffers).toBeLessThan(heapPages / 20);
      } finally {
        await app.close();
      }
    }, 120_000);
  },
  ['postgres'],
);

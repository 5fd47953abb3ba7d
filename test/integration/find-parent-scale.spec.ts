import { jobQueueMigrations, type JobFilter } from '../../lib';
import { findPageStatement } from '../../lib/query/find-jobs.sql';
import { normalizeFilter } from '../../lib/query/job-filter';
import { describeDialects } from '../support/describe-dialects';
import { numbers } from '../support/number-rows';
import { explainText, findPageReads } from '../support/plan-reads';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const ROWS = 1_000_000;
const CONTAINERS = 1_000;
const PAGE = 50;
/** Rows a page of PAGE may read: its PAGE + 1 rows, and as many again of slack. */
const READ_BOUND = 2 * (PAGE + 1);

/** One find page (below `before`) and the rows the server read for it (none counted on SQLite). */
const pageReads = (app: QueueApp, filter: JobFilter, before: number | null) => findPageReads(app, filter, before, PAGE);

/**
 * 1,000 containers, then 1,000,000 jobs: the oldest 10,000 children of one container (a fan-out
 * enqueued long ago), after them every 100th job a child of a second container, every other job
 * a child of one of 998 more, the rest without a parent.
 */
async function fill(app: QueueApp): Promise<{ old: number; spread: number }> {
  const d = app.db.dialect.name;
  const now = d === 'postgres' ? 'now()' : d === 'mysql' ? 'UTC_TIMESTAMP(3)' : `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
  await app.rows(
    `INSERT INTO jobs (type, args, state, is_container, pending_children, run_after, created_at, updated_at) SELECT 't', '{}', 'waiting', 1, 1, ${now}, ${now}, ${now} FROM ${numbers(app, CONTAINERS).render(d).text}`,
  );
  const old = Number((await app.rows(`SELECT MIN(id) AS id FROM jobs`))[0].id);
  for (let b = 0; b < ROWS / 100_000; b++) {
    const g = `(i + ${b * 100_000})`;
    const parent = `CASE WHEN ${g} <= 10000 THEN ${old} WHEN ${g} % 100 = 0 THEN ${old + 1} WHEN ${g} % 2 = 1 THEN ${old + 2} + (${g} % ${CONTAINERS - 2}) ELSE NULL END`;
    await app.rows(
      `INSERT INTO jobs (type, args, state, parent_id, run_after, created_at, updated_at, finished_at) SELECT 't', '{}', 'done', ${parent}, ${now}, ${now}, ${now}, ${now} FROM ${numbers(app, 100_000).render(d).text}`,
    );
  }
  await app.rows(d === 'postgres' ? 'VACUUM ANALYZE jobs' : d === 'mysql' ? 'ANALYZE TABLE jobs' : 'ANALYZE');
  return { old, spread: old + 1 };
}

describeDialects('find({ parentId }) at 1,000,000 jobs: a page reads its own rows', (db) => {
  it('a container of 10,000 old children, one of 10,000 spread over the table, with state or type: first and next page read about 50 rows', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
    try {
      const { old, spread } = await fill(app);
      const newest = async (parent: number, below = Number.MAX_SAFE_INTEGER) =>
        (await app.rows(`SELECT id FROM jobs WHERE parent_id = ${parent} AND id < ${below} ORDER BY id DESC LIMIT ${PAGE}`)).map((r) => Number(r.id));
      const filters: JobFilter[] = [{ parentId: old }, { parentId: spread }, { parentId: old, state: 'done' }, { parentId: spread, type: 't' }];
      const reads: Array<{ filter: string; first: number | string; next: number | string }> = [];
      for (const filter of filters) {
        const parent = filter.parentId!;
        const first = await pageReads(app, filter, null);
        expect(first.ids).toEqual(await newest(parent));
        const next = await pageReads(app, filter, first.next);
        expect(next.ids).toEqual(await newest(parent, first.next!));
        reads.push({ filter: JSON.stringify(filter), first: first.read, next: next.read });
      }
      // Before (PostgreSQL): the first page of `old` walked the primary key past its 990,000
      // newer jobs, of `spread` past about 5,000; MySQL intersected parent and state, 30,052.
      if (db.dialect !== 'sqlite') {
        const within = (n: number | string) => (Number(n) <= READ_BOUND ? n : `at most ${READ_BOUND}`);
        expect(reads).toEqual(reads.map((r) => ({ ...r, first: within(r.first), next: within(r.next) })));
      }
      if (db.dialect === 'sqlite') {
        // No counter of rows read: the plan reads the parent index newest first, with no sort.
        for (const filter of filters) {
          const plan = await explainText(app, 'EXPLAIN QUERY PLAN', findPageStatement(app.db.dialect, normalizeFilter(filter), { beforeId: null }, PAGE));
          expect(plan).toMatch(/USING INDEX jobs_parent_idx \(parent_id=\?\)/);
          expect(plan).not.toMatch(/TEMP B-TREE/);
        }
      }
    } finally {
      await app.close();
    }
  }, 300_000);
});

describeDialects(
  'find({ parentId }) on PostgreSQL: (parent_id, id) replaces (parent_id) in place (migration 36)',
  (db) => {
    it('down to (parent_id) and up again with rows kept; the index is the only one on parent_id', async () => {
      const app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      try {
        const ids = await app.queue.enqueueGraph([
          { ref: 'box', type: 't' },
          ...Array.from({ length: 30 }, (_, i) => ({ ref: `c${i}`, type: 't', parent: 'box' })),
        ]);
        const onParent = async () =>
          (await app.rows(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'jobs' AND indexdef LIKE '%(parent_id%'`)).map((r) => String(r.indexname));
        expect(await onParent()).toEqual(['jobs_parent_id_idx']);
        const [migration] = jobQueueMigrations('postgres').filter((m) => m.version === 36);
        const runner = app.dataSource.createQueryRunner();
        try {
          await migration.down(runner);
          expect(await onParent()).toEqual(['jobs_parent_idx']);
          await migration.up(runner);
          expect(await onParent()).toEqual(['jobs_parent_id_idx']);
          // Again, as after a CREATE INDEX CONCURRENTLY beforehand: IF NOT EXISTS, nothing changes.
          await migration.up(runner);
          expect(await onParent()).toEqual(['jobs_parent_id_idx']);
        } finally {
          await runner.release();
        }
        const { jobs } = await app.queue.find({ parentId: ids.box }, { limit: 10 });
        expect(jobs.map((j) => j.id)).toEqual(Array.from({ length: 10 }, (_, k) => ids[`c${29 - k}`]));
      } finally {
        await app.close();
      }
    });
  },
  ['postgres'],
);

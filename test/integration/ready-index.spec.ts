import type { ClaimRequest } from '../../lib';
import { claimCandidatesStatement } from '../../lib/claim/claim-candidates.sql';
import { postgresClaimStatement } from '../../lib/claim/postgres.claim';
import { sqliteClaimStatement } from '../../lib/claim/sqlite.claim';
import type { Sql } from '../../lib/database/sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const DONE_ROWS = 200_000;

/** 200k finished rows next to a few ready ones: the claim must still read only the ready index. */
async function fillDoneRows(app: QueueApp): Promise<void> {
  const d = app.db.dialect.name;
  if (d === 'postgres') {
    await app.rows(`INSERT INTO jobs (type, args, state, finished_at) SELECT 't', 'null', 'done', now() FROM generate_series(1, ${DONE_ROWS})`);
    await app.rows(`ANALYZE jobs`);
  } else if (d === 'sqlite') {
    await app.rows(`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${DONE_ROWS})
      INSERT INTO jobs (type, args, state, run_after, created_at, updated_at) SELECT 't', 'null', 'done', '2026-01-01', '2026-01-01', '2026-01-01' FROM s`);
    await app.rows(`ANALYZE`);
  } else {
    await app.rows(`INSERT INTO jobs (type, args, state, run_after, created_at, updated_at) VALUES ('t', 'null', 'done', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`);
    while (Number((await app.rows(`SELECT COUNT(*) AS n FROM jobs`))[0].n) < DONE_ROWS) {
      await app.rows(`INSERT INTO jobs (type, args, state, run_after, created_at, updated_at) SELECT type, args, state, run_after, created_at, updated_at FROM jobs`);
    }
    await app.rows(`ANALYZE TABLE jobs`);
  }
}

async function explain(app: QueueApp, statement: Sql): Promise<string> {
  const rows = await explainRows(app, statement);
  return rows.map((r) => Object.values(r).join(' ')).join('\n');
}

async function explainRows(app: QueueApp, statement: Sql): Promise<Record<string, unknown>[]> {
  const d = app.db.dialect.name;
  const { text, params } = statement.render(d);
  return app.dataSource.query((d === 'sqlite' ? 'EXPLAIN QUERY PLAN ' : 'EXPLAIN ') + text, params);
}

describeDialects('the claim reads the ready index only', (db) => {
  let app: QueueApp;
  const request: ClaimRequest = { owner: 'w', types: ['t'], quotas: [{ limit: 10 }], leaseTtlMs: 30_000, start: true };
  const grouped: ClaimRequest = { ...request, quotas: [{ group: 'g', limit: 10 }] };

  beforeAll(async () => {
    app = await startQueueApp(db, { externalTypes: ['t'] });
    await fillDoneRows(app);
    await app.queue.enqueueGraph(Array.from({ length: 50 }, (_, i) => ({ ref: `r${i}`, type: 't', group: i % 2 ? 'g' : 'h' })));
  }, 300_000);
  afterAll(() => app?.close());

  it(`with ${DONE_ROWS.toLocaleString('en')} done rows in the table`, async () => {
    const d = db.dialect;
    if (d === 'postgres') {
      const plan = await explain(app, postgresClaimStatement(app.db.dialect, request)!);
      expect(plan).toMatch(/Index Scan using jobs_ready_idx on jobs/);
      expect(plan).not.toMatch(/Seq Scan on jobs/);
      const groupPlan = await explain(app, postgresClaimStatement(app.db.dialect, grouped)!);
      expect(groupPlan).toMatch(/Index Scan using jobs_ready_group_idx on jobs/);
    } else if (d === 'mysql') {
      const [plan] = await explainRows(app, claimCandidatesStatement(app.db.dialect, request.types, request.quotas[0]));
      expect(plan.key).toBe('jobs_ready_idx');
      expect(String(plan.Extra)).not.toMatch(/filesort/); // InnoDB walks the index in ORDER BY order
      expect(Number(plan.rows)).toBeLessThan(1_000);
      const [gplan] = await explainRows(app, claimCandidatesStatement(app.db.dialect, grouped.types, grouped.quotas[0]));
      expect(gplan.key).toBe('jobs_ready_group_idx');
      expect(String(gplan.Extra)).not.toMatch(/filesort/);
    } else {
      const plan = await explain(app, sqliteClaimStatement(app.db.dialect, request, request.quotas[0]));
      expect(plan).toMatch(/USING INDEX jobs_ready_idx/);
      expect(plan).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
      const gplan = await explain(app, sqliteClaimStatement(app.db.dialect, grouped, grouped.quotas[0]));
      expect(gplan).toMatch(/USING INDEX jobs_ready_group_idx/);
    }
  });
});

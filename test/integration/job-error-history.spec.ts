import { Injectable } from '@nestjs/common';
import { JobContext, JobHandler } from '../../lib';
import { sql } from '../../lib/database/sql';
import { MAX_ERROR_LENGTH } from '../../lib/finalize/error-text';
import { logLinesStatement } from '../../lib/logs/job-logs.sql';
import { MAX_ERROR_LINES, MAX_LOG_MESSAGE_LENGTH } from '../../lib/logs/log-line';
import { jobQueueMigrations } from '../../lib/migrations';
import { SweepsService } from '../../lib/sweeps/sweeps.service';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { explainText, mysqlRowsRead, pgRowsScanned } from '../support/plan-reads';
import { strandJobs } from '../support/stranded-jobs';

@Injectable()
class FailingJobs {
  @JobHandler('errors.always', { maxAttempts: 3 })
  async always(args: { long?: boolean } | null, ctx: JobContext): Promise<null> {
    ctx.log(`trying ${ctx.attempt}`);
    // Built here: args refuse a NUL.
    throw new Error(args?.long ? `<script>alert(1)</script> nul\u0000 ${'x'.repeat(20_000)}` : `attempt ${ctx.attempt} failed`);
  }

  @JobHandler('errors.hang', { maxAttempts: 2, timeoutMs: 300 })
  async hang(_args: unknown, ctx: JobContext): Promise<null> {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    return null;
  }

  @JobHandler('errors.fine')
  async fine(): Promise<string> {
    return 'ok';
  }
}

/**
 * Each failed attempt leaves its error as a line of level `error` in the job's log, written with
 * the failure itself (every path that records one: the worker's fail, PostgreSQL's one-statement
 * fail and its cascade fallback, the reclaim and timeout sweeps), once, cut to a log line.
 */
describeDialects('job error history', (db) => {
  let app: QueueApp;
  let idle: QueueApp;

  beforeAll(async () => {
    // Its own sweeps never run during the specs: the stranded jobs below are the explicit sweep's
    // alone (a sweep of this app committing after a spec ended wrote into the next one's tables).
    const noSweeps = { reclaimIntervalMs: 3_600_000, timeoutSweepIntervalMs: 3_600_000 };
    app = await startQueueApp(db, { retryBackoff: { baseMs: 10, maxMs: 20 }, pollIntervalMs: 50, ...noSweeps }, [FailingJobs]);
    // No worker: the stranded jobs below stay where the test put them until it runs a sweep.
    idle = await startQueueApp(db, { worker: false, externalTypes: ['stranded'] });
  });
  afterAll(async () => {
    await app?.close();
    await idle?.close();
  });
  beforeEach(() => resetTables(app));

  const errorLines = async (id: number) => (await app.queue.getLogs(id, { level: 'error' })).logs;

  it('keeps the error of every attempt, in order, after the attempt\'s own lines; lastError is the last', async () => {
    const job = await app.queue.enqueue({ type: 'errors.always' });
    const failed = await app.queue.waitFor(job.id, { timeoutMs: 30_000 });
    expect(failed).toMatchObject({ state: 'failed', attempts: 3 });
    const errors = await errorLines(job.id);
    expect(errors.map((l) => [l.attempt, l.level, l.message.split('\n')[0]])).toEqual([
      [1, 'error', 'Error: attempt 1 failed'],
      [2, 'error', 'Error: attempt 2 failed'],
      [3, 'error', 'Error: attempt 3 failed'],
    ]);
    // The stack comes along, as in lastError, which holds the last one.
    expect(errors[2].message).toMatch(/\n\s+at /);
    expect(failed.lastError).toBe(errors[2].message);
    for (const l of errors) expect(Math.abs(l.at.getTime() - Date.now())).toBeLessThan(60_000);
    const all = (await app.queue.getLogs(job.id)).logs;
    expect(all.map((l) => `${l.attempt}:${l.level}`)).toEqual(['1:info', '1:error', '2:info', '2:error', '3:info', '3:error']);
    expect((await app.queue.getLogs(job.id, { level: 'info' })).logs.map((l) => l.message)).toEqual(['trying 1', 'trying 2', 'trying 3']);
    expect((await app.queue.getLogs(job.id, { level: 'error', attempt: 2 })).logs.map((l) => l.attempt)).toEqual([2]);
  });

  it('writes the line once when a job failed for good cascades to its dependents', async () => {
    const ids = await app.queue.enqueueGraph([
      { ref: 'box', type: 'container' },
      { ref: 'bad', type: 'errors.always', parent: 'box', maxAttempts: 1 },
      { ref: 'next', type: 'errors.fine', dependsOn: ['bad'] },
    ]);
    expect((await app.queue.waitFor(ids.box, { timeoutMs: 30_000 })).state).toBe('failed');
    expect((await app.queue.get(ids.next))?.state).toBe('cancelled');
    expect((await errorLines(ids.bad)).map((l) => [l.attempt, l.message.split('\n')[0]])).toEqual([[1, 'Error: attempt 1 failed']]);
    // Jobs that did not run have no attempt, so no error line.
    expect(await errorLines(ids.next)).toEqual([]);
    expect(await errorLines(ids.box)).toEqual([]);
  });

  it('records a timed-out attempt, then the next one', async () => {
    const job = await app.queue.enqueue({ type: 'errors.hang' });
    expect((await app.queue.waitFor(job.id, { timeoutMs: 30_000 })).state).toBe('failed');
    expect((await errorLines(job.id)).map((l) => [l.attempt, l.message])).toEqual([
      [1, expect.stringMatching(/timed out after 300 ms/)],
      [2, expect.stringMatching(/timed out after 300 ms/)],
    ]);
  });

  it('cuts a long error to a log line (lastError keeps more) and stores odd text as it does lastError', async () => {
    const job = await app.queue.enqueue({ type: 'errors.always', args: { long: true }, maxAttempts: 1 });
    const failed = await app.queue.waitFor(job.id, { timeoutMs: 30_000 });
    const [line] = await errorLines(job.id);
    expect(line.message).toHaveLength(MAX_LOG_MESSAGE_LENGTH);
    expect(failed.lastError).toHaveLength(MAX_ERROR_LENGTH);
    expect(line.message).toBe(failed.lastError!.slice(0, MAX_LOG_MESSAGE_LENGTH));
    expect(line.message.startsWith('Error: <script>alert(1)</script> nul\ufffd x')).toBe(true);
  });

  it(`keeps the errors of a run's first ${MAX_ERROR_LINES} attempts, so a job retried without end does not grow its log for good`, async () => {
    const job = await app.queue.enqueue({ type: 'errors.always', maxAttempts: MAX_ERROR_LINES + 5 });
    const failed = await app.queue.waitFor(job.id, { timeoutMs: 120_000 });
    expect(failed).toMatchObject({ state: 'failed', attempts: MAX_ERROR_LINES + 5 });
    expect(failed.lastError).toMatch(new RegExp(`^Error: attempt ${MAX_ERROR_LINES + 5} failed`));
    const { logs, nextCursor } = await app.queue.getLogs(job.id, { level: 'error', limit: 1_000 });
    expect(nextCursor).toBeNull();
    expect(logs.map((l) => l.attempt)).toEqual(Array.from({ length: MAX_ERROR_LINES }, (_, i) => i + 1));
    // The sweeps keep the same bound.
    const ids = await idle.queue.enqueueGraph([{ ref: 'last', type: 'stranded', maxAttempts: 500 }, { ref: 'past', type: 'stranded', maxAttempts: 500 }]);
    const past = idle.db.dialect.addMs(idle.db.dialect.now(), -60_000);
    await idle.db.run(sql`UPDATE jobs SET state = 'running', lease_owner = 'dead-worker', lease_expires = ${past}, started_at = ${past},
      attempts = CASE WHEN id = ${ids.last} THEN ${sql.raw(String(MAX_ERROR_LINES))} ELSE ${sql.raw(String(MAX_ERROR_LINES + 1))} END WHERE id IN (${ids.last}, ${ids.past})`);
    expect(await idle.module.get(SweepsService).reclaim()).toBe(2);
    expect((await errorLines(ids.last)).map((l) => l.attempt)).toEqual([MAX_ERROR_LINES]);
    expect(await errorLines(ids.past)).toEqual([]);
  }, 150_000);

  it("reads a job's error history without reading its other lines (100 errors among 100,000 lines)", async () => {
    const [job, other] = await Promise.all([app.queue.enqueue({ type: 'errors.fine', runAfter: new Date(Date.now() + 3_600_000) }), app.queue.enqueue({ type: 'errors.fine', runAfter: new Date(Date.now() + 3_600_000) })]);
    const now = db.dialect === 'postgres' ? 'now()' : `'2026-12-06 03:00:00.000'`;
    // Two jobs of 100,000 lines, every 1,000th an error (a job of 100 attempts logging 1,000 lines each).
    for (let start = 0; start < 100_000; start += 5_000) {
      const values: string[] = [];
      for (let i = start; i < start + 5_000; i++) {
        const error = i % 1_000 === 999;
        for (const id of [job.id, other.id]) values.push(`(${id}, ${Math.floor(i / 1_000) + 1}, ${now}, '${error ? `Error: attempt ${Math.floor(i / 1_000) + 1}` : `line ${i}`}', '${error ? 'error' : 'info'}')`);
      }
      await app.rows(`INSERT INTO job_logs (job_id, attempt, logged_at, message, level) VALUES ${values.join(', ')}`);
    }
    const page = await app.queue.getLogs(job.id, { level: 'error', limit: 1_000 });
    expect(page.logs.map((l) => l.attempt)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const statement = logLinesStatement(app.db.dialect, job.id, null, 'error', null, 1_000);
    if (db.dialect === 'postgres') {
      await app.rows(`ANALYZE job_logs`);
      const [row] = await app.dataSource.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.render('postgres').text}`, statement.render('postgres').params);
      const plan = (row['QUERY PLAN'] as Array<{ Plan: Parameters<typeof pgRowsScanned>[0] }>)[0].Plan;
      expect(JSON.stringify(plan)).toContain('job_logs_errors_idx');
      expect(pgRowsScanned(plan)).toBe(100);
    } else if (db.dialect === 'sqlite') {
      expect(await explainText(app, 'EXPLAIN QUERY PLAN', statement)).toMatch(/USING INDEX job_logs_errors_idx/);
    } else {
      // No partial indexes: the page walks this job's lines by (job_id, id), not the other job's.
      // An index on (job_id, level, id) cost every ctx.log() line 13% (see migration 26).
      const { read } = await mysqlRowsRead(app, (tx) => tx.run(statement));
      expect(read).toBeGreaterThanOrEqual(100_000);
      expect(read).toBeLessThanOrEqual(100_010);
    }
  }, 120_000);

  // More stranded jobs than one statement of a failing slice takes (500): the sweeps write in slices.
  const STRANDED = 1_200;

  it.each([
    ['reclaim', /^lease expired: worker dead-worker stopped renewing it during attempt 1\/3$/],
    ['timeout', /^timed out after 1000 ms \(found by the timeout sweep; worker wedged-worker did not finish it\)$/],
  ] as const)('the %s sweep leaves one line per job it fails, in slices', async (sweep, error) => {
    const nodes = Array.from({ length: STRANDED }, (_, i) => ({ ref: `j${i}`, type: 'stranded', maxAttempts: 3 }));
    const ids = Object.values(await idle.queue.enqueueGraph(nodes));
    await strandJobs(idle.db, sweep === 'reclaim' ? 'expired lease' : 'overdue');
    const sweeps = idle.module.get(SweepsService);
    expect(await (sweep === 'reclaim' ? sweeps.reclaim() : sweeps.failOverdue())).toBe(STRANDED);
    const rows = await idle.rows(`SELECT job_id, attempt, level, message FROM job_logs ORDER BY id`);
    expect(rows).toHaveLength(STRANDED);
    expect(new Set(rows.map((r) => Number(r.job_id)))).toEqual(new Set(ids));
    for (const r of rows) {
      expect([Number(r.attempt), r.level]).toEqual([1, 'error']);
      expect(String(r.message)).toMatch(error);
    }
    // Each line is its job's lastError.
    const [{ n: differ }] = await idle.rows(`SELECT COUNT(*) AS n FROM job_logs l JOIN jobs j ON j.id = l.job_id WHERE j.last_error <> l.message`);
    expect(Number(differ)).toBe(0);
  });
});

describeDialects(
  'job error history on PostgreSQL: migration 41 after its index was built by hand',
  (db) => {
    it('down, then the ALTER and CREATE INDEX CONCURRENTLY its comment gives, then up: found, not rebuilt; lines kept', async () => {
      const app = await startQueueApp(db, { retryBackoff: { baseMs: 10, maxMs: 20 }, pollIntervalMs: 50 }, [FailingJobs]);
      try {
        const before = await app.queue.enqueue({ type: 'errors.always', maxAttempts: 1 });
        await app.queue.waitFor(before.id, { timeoutMs: 30_000 });
        const [migration] = jobQueueMigrations('postgres').filter((m) => m.version === 41);
        const runner = app.dataSource.createQueryRunner();
        const indexes = async () => (await app.rows(`SELECT indexname FROM pg_indexes WHERE tablename = 'job_logs' ORDER BY indexname`)).map((r) => String(r.indexname));
        try {
          await migration.down(runner);
          expect(await indexes()).toEqual(['job_logs_job_idx', 'job_logs_pkey']);
          await runner.query(`ALTER TABLE job_logs ADD COLUMN IF NOT EXISTS level text NOT NULL DEFAULT 'info'`);
          await runner.query(`CREATE INDEX CONCURRENTLY job_logs_errors_idx ON job_logs (job_id, id) WHERE level = 'error'`);
          await migration.up(runner);
          expect(await indexes()).toEqual(['job_logs_errors_idx', 'job_logs_job_idx', 'job_logs_pkey']);
        } finally {
          await runner.release();
        }
        // The earlier line went down with the column (an info line now); a new failure writes its own.
        expect((await app.queue.getLogs(before.id)).logs.map((l) => [l.attempt, l.level])).toEqual([[1, 'info'], [1, 'info']]);
        const after = await app.queue.enqueue({ type: 'errors.always', maxAttempts: 1 });
        await app.queue.waitFor(after.id, { timeoutMs: 30_000 });
        expect((await app.queue.getLogs(after.id, { level: 'error' })).logs.map((l) => l.attempt)).toEqual([1]);
      } finally {
        await app.close();
      }
    });
  },
  ['postgres'],
);

import { jest } from '@jest/globals';
import { Injectable, Logger } from '@nestjs/common';
import { JOB_QUEUE_OPTIONS, JobHandler, type GraphNode, type JobContext, type ResolvedJobQueueOptions } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { clearProbes, finalizeCounts, installProbes } from '../support/probe-tables';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * One job whose outcome the database cannot take must not take its finalize batch down with it
 * (issue 18): 300 ordinary jobs and one bad one, concurrency 50, prefetch 500. Every ordinary job
 * runs exactly once and is done, no lease expires, and only the bad job's attempt fails.
 */
const ORDINARY = Number(process.env.POISON_JOBS ?? 300);
const JOB_MS = 20;
const LEASE_TTL_MS = 10_000;
const runs = new Map<number, number>();

/**
 * The first CONCURRENCY attempts to start (the bad ones among them: highest priority) end
 * together, so their outcomes reach the finalizer in one turn and share a batch: under a loaded
 * CI their 20 ms sleeps ended apart, each bad row was written alone, and no batch was split.
 * Later attempts only sleep. The gate opens after a second whatever happens.
 */
const CONCURRENCY = 50;
let firstWave = { started: 0, open: () => undefined as void, opened: Promise.resolve() };
function resetFirstWave(): void {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  firstWave = { started: 0, open, opened };
  setTimeout(open, 1_000).unref();
}
async function work(): Promise<void> {
  await new Promise((r) => setTimeout(r, JOB_MS));
  if (++firstWave.started === CONCURRENCY) firstWave.open();
  if (firstWave.started <= CONCURRENCY) await firstWave.opened;
}

@Injectable()
class PoisonHandlers {
  @JobHandler('work')
  async work(args: { n: number }, ctx: JobContext): Promise<{ n: number; id: number }> {
    runs.set(ctx.id, (runs.get(ctx.id) ?? 0) + 1);
    await work();
    return { n: args.n, id: ctx.id };
  }

  @JobHandler('huge')
  async huge(_args: unknown, ctx: JobContext): Promise<{ blob: string }> {
    runs.set(ctx.id, (runs.get(ctx.id) ?? 0) + 1);
    await work();
    return { blob: 'x'.repeat(40 * 1024 * 1024) }; // 40 MB, over every dialect's default limit
  }

  @JobHandler('poison')
  async poison(_args: unknown, ctx: JobContext): Promise<{ marker: string }> {
    runs.set(ctx.id, (runs.get(ctx.id) ?? 0) + 1);
    await work();
    return { marker: 'poison-result' }; // a value the test's trigger refuses
  }

  @JobHandler('bad-error')
  async badError(_args: unknown, ctx: JobContext): Promise<never> {
    runs.set(ctx.id, (runs.get(ctx.id) ?? 0) + 1);
    await work();
    throw new Error('poison-error: an error text the test trigger refuses');
  }

  @JobHandler('nul-error')
  async nulError(_args: unknown, ctx: JobContext): Promise<never> {
    runs.set(ctx.id, (runs.get(ctx.id) ?? 0) + 1);
    await work();
    throw new Error('a NUL byte \u0000 in the error text'); // PostgreSQL text cannot hold it: stored as U+FFFD
  }

  @JobHandler('plain-fail')
  async plainFail(_args: unknown, ctx: JobContext): Promise<never> {
    runs.set(ctx.id, (runs.get(ctx.id) ?? 0) + 1);
    await work();
    throw new Error('an ordinary failure');
  }
}

/** A trigger that refuses a row whose new result or error carries a poison marker. */
async function installRefusingTrigger(app: QueueApp): Promise<void> {
  const q = (text: string) => app.rows(text);
  const d = app.db.dialect.name;
  if (d === 'postgres') {
    await q(`CREATE OR REPLACE FUNCTION refuse_poison() RETURNS trigger AS $$
      BEGIN
        IF NEW.result LIKE '%poison-result%' OR NEW.last_error LIKE '%poison-error%' THEN
          RAISE EXCEPTION 'row % refused by the test trigger', NEW.id;
        END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql`);
    await q(`CREATE TRIGGER jobs_refuse_poison BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION refuse_poison()`);
  } else if (d === 'mysql') {
    await q(`CREATE TRIGGER jobs_refuse_poison BEFORE UPDATE ON jobs FOR EACH ROW
      BEGIN
        IF NEW.result LIKE '%poison-result%' OR NEW.last_error LIKE '%poison-error%' THEN
          SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'row refused by the test trigger';
        END IF;
      END`);
  } else {
    await q(`CREATE TRIGGER jobs_refuse_poison BEFORE UPDATE ON jobs
      WHEN NEW.result LIKE '%poison-result%' OR NEW.last_error LIKE '%poison-error%'
      BEGIN SELECT RAISE(ABORT, 'row refused by the test trigger'); END`);
  }
}

async function dropRefusingTrigger(app: QueueApp): Promise<void> {
  await app.rows(app.db.dialect.name === 'postgres' ? `DROP TRIGGER IF EXISTS jobs_refuse_poison ON jobs` : `DROP TRIGGER IF EXISTS jobs_refuse_poison`);
}

describeDialects(`poisoned finalize batch: ${ORDINARY} jobs + 1 bad one, concurrency 50, prefetch 500`, (db) => {
  let app: QueueApp;
  const warnings: string[] = [];
  const expired: string[] = [];

  beforeAll(async () => {
    const warn = Logger.prototype.warn;
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(function (this: Logger, message: unknown, ...rest: unknown[]) {
      warnings.push(String(message));
      return warn.call(this, message, ...(rest as []));
    });
    const log = Logger.prototype.log;
    jest.spyOn(Logger.prototype, 'log').mockImplementation(function (this: Logger, message: unknown, ...rest: unknown[]) {
      if (/reclaim sweep/.test(String(message))) expired.push(String(message));
      return log.call(this, message, ...(rest as []));
    });
    app = await startQueueApp(
      db,
      { concurrency: CONCURRENCY, prefetch: 500, leaseTtlMs: LEASE_TTL_MS, reclaimIntervalMs: 200, pollIntervalMs: 50, retryBackoff: { baseMs: 20, maxMs: 50 } },
      [PoisonHandlers],
    );
    await installProbes(app);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await app?.close();
  });
  beforeEach(async () => {
    await resetTables(app);
    await clearProbes(app);
    runs.clear();
    resetFirstWave();
    warnings.length = 0;
    expired.length = 0;
  });

  /** Enqueues the bad node first (highest priority) among the ordinary ones, waits, and checks the ordinary ones. */
  async function runPoisoned(bad: GraphNode[]): Promise<{ ids: Record<string, number>; elapsed: number }> {
    const nodes: GraphNode[] = [...bad];
    for (let i = 0; i < ORDINARY; i++) nodes.push({ ref: `w${i}`, type: 'work', args: { n: i } });
    nodes.push({ ref: 'after-w0', type: 'work', args: { n: -1 }, dependsOn: ['w0'] });
    const started = Date.now();
    const ids = await app.queue.enqueueGraph(nodes);
    const open = async () => app.count(`state NOT IN ('done', 'failed', 'cancelled')`);
    const deadline = Date.now() + 60_000 + ORDINARY * 200;
    while ((await open()) > 0) {
      if (Date.now() > deadline) throw new Error(`not finished: ${await open()} job(s) open`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const elapsed = Date.now() - started;

    const ordinary = Object.entries(ids).filter(([ref]) => ref.startsWith('w') || ref === 'after-w0');
    const rows = await app.rows(`SELECT id, state, attempts, result, last_error FROM jobs`);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const wrong = ordinary
      .map(([ref, id]) => ({ ref, row: byId.get(id)!, runs: runs.get(id) ?? 0 }))
      .filter(({ row, runs: n, ref }) => row.state !== 'done' || Number(row.attempts) !== 1 || n !== 1 || JSON.parse(String(row.result)).id !== ids[ref]);
    expect(wrong.slice(0, 5).map((w) => `${w.ref}: ${w.row.state}, attempts ${w.row.attempts}, ran ${w.runs}x, ${w.row.last_error}`)).toEqual([]);
    // Finalized exactly once each, and no lease expired (the reclaim sweep moved nothing).
    const counts = await finalizeCounts(app);
    expect(ordinary.filter(([, id]) => counts.get(id) !== 1)).toEqual([]);
    expect(expired).toEqual([]);
    expect(rows.filter((r) => String(r.last_error ?? '').includes('lease expired'))).toEqual([]);
    expect(await app.count(`lease_owner IS NOT NULL`)).toBe(0);
    return { ids, elapsed };
  }

  it('a 40 MB result fails its own job for good with ResultTooLargeError; the rest run once and are done', async () => {
    const { ids, elapsed } = await runPoisoned([
      { ref: 'huge', type: 'huge', priority: 10, maxAttempts: 3 },
      { ref: 'after-huge', type: 'work', args: { n: -2 }, dependsOn: ['huge'] },
    ]);
    const huge = await app.queue.get(ids.huge);
    expect(huge).toMatchObject({ state: 'failed', attempts: 1, result: null });
    expect(huge!.lastError).toMatch(/^ResultTooLargeError: the handler's result serializes to 41943051 bytes, over the \d+-byte limit \(option maxResultBytes\)/);
    expect(runs.get(ids.huge)).toBe(1); // failed for good: not retried
    expect(await app.queue.get(ids['after-huge'])).toMatchObject({ state: 'cancelled' });
    process.stdout.write(`[${db.dialect}] poisoned batch (40 MB result): ${ORDINARY + 3} jobs in ${elapsed} ms, ${[...runs.values()].reduce((a, b) => a + b, 0)} handler runs\n`);
  });

  it('a row the database refuses (a trigger) fails alone with the database message; the rest of its batch is written once', async () => {
    await installRefusingTrigger(app);
    try {
      const { ids, elapsed } = await runPoisoned([
        { ref: 'poison', type: 'poison', priority: 10, maxAttempts: 2 },
        { ref: 'after-poison', type: 'work', args: { n: -3 }, dependsOn: ['poison'] },
        { ref: 'bad-error', type: 'bad-error', priority: 10, maxAttempts: 1 },
        { ref: 'plain-fail', type: 'plain-fail', priority: 10, maxAttempts: 1 },
        { ref: 'nul-error', type: 'nul-error', priority: 10, maxAttempts: 1 },
      ]);
      // The refused result: the attempt failed with the trigger's message, was retried (attempts
      // left), refused again, and failed; its dependent was cancelled.
      const poison = await app.queue.get(ids.poison);
      expect(poison).toMatchObject({ state: 'failed', attempts: 2, result: null });
      expect(poison!.lastError).toMatch(/^the database refused the result of this attempt: .*refused by the test trigger/);
      expect(runs.get(ids.poison)).toBe(2);
      expect(await app.queue.get(ids['after-poison'])).toMatchObject({ state: 'cancelled' });
      // A failure record the database refuses is written without the attempt's own text.
      const badError = await app.queue.get(ids['bad-error']);
      expect(badError).toMatchObject({ state: 'failed', attempts: 1 });
      expect(badError!.lastError).toMatch(/^the database refused this attempt's error text: .*refused by the test trigger/);
      // A NUL byte (which PostgreSQL's text refuses) is stored as U+FFFD, with the rest of the text.
      const nul = await app.queue.get(ids['nul-error']);
      expect(nul).toMatchObject({ state: 'failed', attempts: 1 });
      expect(nul!.lastError).toContain('a NUL byte \ufffd in the error text');
      // An ordinary failure in the same batches is recorded as it was.
      expect((await app.queue.get(ids['plain-fail']))!.lastError).toContain('an ordinary failure');
      // The refused rows shared a batch with others: it was split, not written alone.
      const splits = warnings.filter((w) => /refused a finalize of \d+ job\(s\)/.test(w));
      expect(splits.length).toBeGreaterThan(0);
      const largest = Math.max(...splits.map((w) => Number(/of (\d+) job/.exec(w)![1])));
      expect(largest).toBeGreaterThan(1);
      process.stdout.write(
        `[${db.dialect}] poisoned batch (trigger): ${ORDINARY + 6} jobs in ${elapsed} ms, ${[...runs.values()].reduce((a, b) => a + b, 0)} handler runs, ` +
          `${splits.length} batch(es) split, largest ${largest}\n`,
      );
    } finally {
      await dropRefusingTrigger(app);
    }
  });
});

describeDialects(
  'maxResultBytes against the server packet limit',
  (db) => {
    it('refuses at start-up a maxResultBytes the server max_allowed_packet cannot carry', async () => {
      const boot = startQueueApp(db, { maxResultBytes: 40 * 1024 * 1024, worker: false, externalTypes: ['t'] });
      await expect(boot).rejects.toThrow(/"maxResultBytes" must be at most \d+ on this server: its max_allowed_packet is \d+ bytes/);
    });

    it('keeps the default, which fits', async () => {
      const app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      try {
        const [{ packet }] = await app.rows(`SELECT @@max_allowed_packet AS packet`);
        const limit = (app.module.get(JOB_QUEUE_OPTIONS) as ResolvedJobQueueOptions).maxResultBytes;
        expect(limit).toBe(Math.min(4 * 1024 * 1024, Math.floor((Number(packet) - 1024 * 1024) / 2)));
      } finally {
        await app.close();
      }
    });
  },
  ['mysql'],
);

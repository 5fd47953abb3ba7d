import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeDialects } from '../support/describe-dialects';
import { finalizeCounts } from '../support/probe-tables';
import { type QueueApp } from '../support/queue-app';
import { probedEnqueuer } from '../support/probed-enqueuer';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

const TYPES = ['crashy', 'wedge', 'counted', 'slow', 'noop'];

describeDialects('crash, wedge and shutdown with real worker processes', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];
  const fast = { leaseTtlMs: 1_500, heartbeatIntervalMs: 300, reclaimIntervalMs: 200, timeoutSweepIntervalMs: 200, pollIntervalMs: 100 };
  const spawn = (extra: Record<string, unknown> = {}) => {
    const w = new WorkerProcess('engine.worker', { ...db.options(), ...fast, ...extra });
    workers.push(w);
    return w;
  };

  probedEnqueuer(db, { externalTypes: TYPES, workers, started: (a) => (app = a) });
  const jobRow = async (id: number) => ({
    job: await app.rows(`SELECT state, attempts, run_after, lease_owner, lease_expires, started_at, last_error FROM jobs WHERE id = ${id}`),
    now: await app.rows(`SELECT ${db.dialect === 'postgres' ? 'now()' : db.dialect === 'mysql' ? 'UTC_TIMESTAMP(3)' : "strftime('%Y-%m-%d %H:%M:%f', 'now')"} AS now`),
  });

  it('a worker killed with SIGKILL mid-job: another reclaims after the lease TTL and finalizes once', async () => {
    const a = spawn();
    await a.waitFor('ready');
    const job = await app.queue.enqueue({ type: 'crashy', args: { firstAttemptMs: 60_000, ms: 50 } });
    // Mid-job: the handler itself has started (its probe row exists), not just the claim.
    await eventually('attempt 1 inside the handler in A', async () => (await app.rows(`SELECT 1 FROM executions WHERE job_id = ${job.id}`)).length === 1);
    a.kill('SIGKILL');
    await a.exited;
    const killedAt = Date.now();

    const b = spawn();
    const { pid: bPid } = await b.waitFor('ready');
    const done = await WorkerProcess.explained(app.queue.waitFor(job.id, { timeoutMs: 30_000 }), [b], () => jobRow(job.id));
    const recoveryMs = Date.now() - killedAt;
    process.stdout.write(`[${db.dialect}] SIGKILL recovery: done ${recoveryMs} ms after the kill (lease TTL ${fast.leaseTtlMs} ms)\n`);

    expect(done).toMatchObject({ state: 'done', attempts: 2, result: { worker: String(bPid) } });
    expect(done.lastError).toMatch(/lease expired: worker .* stopped renewing it during attempt 1/);
    const runs = await app.rows(`SELECT worker, attempt, finished FROM executions WHERE job_id = ${job.id} ORDER BY attempt`);
    expect(runs.map((r) => [Number(r.attempt), Number(r.finished)])).toEqual([
      [1, 0], // killed mid-job
      [2, 1],
    ]);
    expect((await finalizeCounts(app)).get(job.id)).toBe(1);
    expect(await app.count(`lease_owner IS NOT NULL OR lease_expires IS NOT NULL`)).toBe(0);
  });

  it('a wedged worker (blocked event loop) is failed by the timeout sweep of another process', async () => {
    const a = spawn();
    await a.waitFor('ready');
    const releaseFile = join(mkdtempSync(join(tmpdir(), 'jq-wedge-')), 'release');
    const job = await app.queue.enqueue({ type: 'wedge', args: { releaseFile, maxBlockMs: 60_000 }, timeoutMs: 800, maxAttempts: 2 });
    await a.waitFor('wedging');
    // A's lease would outlive the timeout; only another process can notice.
    await app.rows(`UPDATE jobs SET lease_expires = ${futureSql(db.dialect, 60)} WHERE id = ${job.id}`);
    const b = spawn();
    const { pid: bPid } = await b.waitFor('ready');
    const done = await WorkerProcess.explained(app.queue.waitFor(job.id, { timeoutMs: 30_000 }), [a, b], () => jobRow(job.id));
    expect(done).toMatchObject({ state: 'done', attempts: 2, result: { worker: String(bPid) } });
    expect(done.lastError).toMatch(/timed out after 800 ms \(found by the timeout sweep/);
    writeFileSync(releaseFile, ''); // A wakes up only now, long after B finished its job
    await a.waitFor('unwedged', 20_000);
    await new Promise((r) => setTimeout(r, 500)); // A tries to finalize its stale attempt: refused
    expect((await app.queue.get(job.id))!.result).toEqual({ worker: String(bPid) });
    expect((await finalizeCounts(app)).get(job.id)).toBe(1);
  });

  it('graceful shutdown finishes short jobs, hands back long ones, and leaves no running job behind', async () => {
    const a = spawn({ shutdownGraceMs: 1_000, concurrency: 4 });
    await a.waitFor('ready');
    const short = await app.queue.enqueue({ type: 'slow', args: { ms: 300 } });
    const long = await app.queue.enqueue({ type: 'slow', args: { ms: 60_000 } });
    // Both handlers started (each records its execution first), not merely both rows running: a
    // claim writes running before the worker has the jobs, and a SIGTERM in between rightly
    // hands them back unstarted.
    const started = async () => Number((await app.rows(`SELECT COUNT(*) AS n FROM executions WHERE job_id IN (${short.id}, ${long.id})`))[0].n);
    await eventually('both handlers started', async () => (await started()) === 2);
    a.kill('SIGTERM');
    const exit = await a.exited;
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
    expect(await app.queue.get(short.id)).toMatchObject({ state: 'done', result: 'slow done' });
    // Handed back: ready again, the interrupted attempt not counted, no owner.
    expect(await app.queue.get(long.id)).toMatchObject({ state: 'ready', attempts: 0 });
    expect(await app.count(`state IN ('leased', 'running')`)).toBe(0);
    expect(await app.count(`lease_owner IS NOT NULL`)).toBe(0);
  });
});

function futureSql(dialect: string, seconds: number): string {
  if (dialect === 'postgres') return `now() + interval '${seconds} seconds'`;
  if (dialect === 'mysql') return `UTC_TIMESTAMP(3) + INTERVAL ${seconds} SECOND`;
  return `strftime('%Y-%m-%d %H:%M:%f', 'now', '+${seconds} seconds')`;
}

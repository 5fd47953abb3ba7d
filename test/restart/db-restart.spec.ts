import { spawn } from 'node:child_process';
import type { GraphNode } from '../../lib';
import { ensureMariadbUp, ensurePostgresUp, restartMariadb, restartPostgres } from '../support/db-servers';
import { describeDialects } from '../support/describe-dialects';
import { finalizeCounts, installProbes } from '../support/probe-tables';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

const JOBS = 3_000;

/** Polls through outages: the spec's own connection breaks too. */
async function eventuallyThrough(what: string, check: () => Promise<boolean>, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* the server is restarting */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function workload(): GraphNode[] {
  const nodes: GraphNode[] = [];
  for (let g = 0; g < 60; g++) {
    nodes.push({ ref: `box${g}`, type: 'container' });
    for (let c = 0; c < 5; c++) nodes.push({ ref: `c${g}.${c}`, type: 'chaos', parent: `box${g}`, args: { ms: 15 } });
    nodes.push({ ref: `join${g}`, type: 'chaos', dependsOn: Array.from({ length: 5 }, (_, c) => `c${g}.${c}`), args: { ms: 5 } });
  }
  while (nodes.length < JOBS) nodes.push({ ref: `j${nodes.length}`, type: 'chaos', args: { ms: 15 } });
  return nodes;
}

describeDialects('the database server restarts mid-run', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    workers.forEach((w) => w.kill());
    // Whatever happened, leave the server running for the next spec, session and CI run.
    await (db.dialect === 'postgres' ? ensurePostgresUp() : ensureMariadbUp());
    await app?.close().catch(() => undefined);
  });

  it('workers ride out the outage, reconnect and finish everything exactly once', async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['chaos'] });
    await installProbes(app);
    await app.queue.enqueueGraph(workload());
    const options = { ...db.options(), concurrency: 6, pollIntervalMs: 100, leaseTtlMs: 8_000, heartbeatIntervalMs: 1_000 };
    for (let i = 0; i < 2; i++) workers.push(new WorkerProcess('engine.worker', options));
    await Promise.all(workers.map((w) => w.waitFor('ready')));
    await eventuallyThrough('a fifth of the jobs done', async () => (await app.count(`state = 'done'`)) > JOBS / 5);

    const downMs = db.dialect === 'postgres' ? await restartPostgres() : await restartMariadb();
    const doneAtRestart = await (async () => {
      for (;;) {
        try {
          return await app.count(`state = 'done'`);
        } catch {
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    })();
    expect(doneAtRestart).toBeLessThan(JOBS); // the restart really happened mid-run

    await eventuallyThrough('every job finished', async () => (await app.count(`state NOT IN ('done', 'failed', 'cancelled')`)) === 0);
    // The processes stayed up and still work: a job enqueued after the outage runs.
    expect(workers.every((w) => !w.dead)).toBe(true);
    const late = await app.queue.enqueue({ type: 'chaos', args: { ms: 1 } });
    expect((await app.queue.waitFor(late.id, { timeoutMs: 30_000 })).state).toBe('done');

    expect(await app.count(`state <> 'done'`)).toBe(0);
    const counts = await finalizeCounts(app);
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
    expect(await app.count(`lease_owner IS NOT NULL`)).toBe(0);
    const logs = workers.flatMap((w) => [...w.stderr, ...w.messages.filter((m) => m.type === 'log').map((m) => String(m.line))]);
    const outage = logs.filter((l) => /unreachable|claim failed|LISTEN connection lost|lease renewal failed|sweep failed/.test(l));
    process.stdout.write(`[${db.dialect}] server restart took ${downMs} ms; ${doneAtRestart}/${JOBS} done when it came back; ${outage.length} outage log line(s), e.g. ${outage[0] ?? '-'}\n`);
    expect(outage.length).toBeGreaterThan(0); // the outage was noticed and logged, not swallowed
  });
}, ['postgres', 'mysql']);

describeDialects('another process holds the SQLite write lock for seconds', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    workers.forEach((w) => w.kill());
    await app?.close();
  });

  it('workers wait with busy retries: no errors, nothing lost, each job finalized once', async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['chaos'] });
    await installProbes(app);
    await app.queue.enqueueGraph(workload().slice(0, 1_500));
    for (let i = 0; i < 2; i++) workers.push(new WorkerProcess('engine.worker', { ...db.options(), concurrency: 6, pollIntervalMs: 50 }));
    await Promise.all(workers.map((w) => w.waitFor('ready')));
    // Three times, a plain sqlite client takes the write lock and sits on it for 3 s.
    for (let i = 0; i < 3; i++) {
      await holdWriteLock(db.location, 3_000);
      await new Promise((r) => setTimeout(r, 300));
    }
    await eventuallyThrough('every job finished', async () => (await app.count(`state NOT IN ('done', 'failed', 'cancelled')`)) === 0, 120_000);
    expect(await app.count(`state <> 'done'`)).toBe(0);
    expect([...(await finalizeCounts(app)).values()].every((n) => n === 1)).toBe(true);
    const errors = workers.flatMap((w) => w.stderr).filter((l) => /ERROR|SQLITE_BUSY/.test(l));
    expect(errors).toEqual([]);
  });
}, ['sqlite']);

/** Another OS process: BEGIN IMMEDIATE, hold it, COMMIT. */
function holdWriteLock(file: string, ms: number): Promise<void> {
  const script = `const db = require('better-sqlite3')(${JSON.stringify(file)}); db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n'); setTimeout(() => { db.exec('COMMIT'); process.exit(0); }, ${ms});`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`lock holder exited ${code}`))));
  });
}

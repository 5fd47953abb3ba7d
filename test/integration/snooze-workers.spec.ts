import { describeDialects } from '../support/describe-dialects';
import { finalizeCounts } from '../support/probe-tables';
import { type QueueApp } from '../support/queue-app';
import { probedEnqueuer } from '../support/probed-enqueuer';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

const JOBS = 2_000;
const TIMES = 3;

/** Snoozing across worker processes, one of them killed: every job ends done once, its snoozes counted once each. */
describeDialects('snooze with real worker processes', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];
  const fast = { leaseTtlMs: 1_500, heartbeatIntervalMs: 300, reclaimIntervalMs: 200, pollIntervalMs: 50, concurrency: 20 };
  const spawn = () => {
    const w = new WorkerProcess('engine.worker', { ...db.options(), ...fast });
    workers.push(w);
    return w;
  };

  probedEnqueuer(db, { externalTypes: ['snoozy'], workers, started: (a) => (app = a) });

  it(`${JOBS.toLocaleString('en')} jobs snoozing ${TIMES} times each on 2 processes, one SIGKILLed midway: each done once, on attempt 1 unless its run was killed`, async () => {
    const [a, b] = [spawn(), spawn()];
    await Promise.all([a.waitFor('ready'), b.waitFor('ready')]);
    const started = Date.now();
    for (let s = 0; s < JOBS; s += 1_000) {
      await app.queue.enqueueGraph(Array.from({ length: 1_000 }, (_, i) => ({ ref: `j${s + i}`, type: 'snoozy', args: { times: TIMES, ms: 100 } })));
    }
    await eventually('a third of the snoozes written', async () => Number((await app.rows(`SELECT SUM(snoozes) AS n FROM jobs`))[0].n) >= (JOBS * TIMES) / 3, 120_000, 50);
    a.kill('SIGKILL');
    const c = spawn();
    await c.waitFor('ready');
    // Scales with the work: 4 runs a job on the two live processes, with room for a loaded machine.
    await eventually('all done', async () => (await app.count(`state = 'done'`)) === JOBS, 60_000 + JOBS * 60, 200);
    const ms = Date.now() - started;
    const rows = await app.rows(`SELECT attempts, snoozes, COUNT(*) AS n FROM jobs GROUP BY attempts, snoozes ORDER BY attempts`);
    const runs = Number((await app.rows(`SELECT COUNT(*) AS n FROM executions`))[0].n);
    process.stdout.write(`[${db.dialect}] ${JOBS} jobs × ${TIMES} snoozes on 2 processes (one killed): ${ms} ms, ${runs} runs; (attempts, snoozes, jobs): ${JSON.stringify(rows.map((r) => [Number(r.attempts), Number(r.snoozes), Number(r.n)]))}\n`);
    // Every job snoozed exactly TIMES times (the count decides, so a rerun after the kill adds none).
    for (const r of rows) expect(Number(r.snoozes)).toBe(TIMES);
    // Attempts: 1, or 2 for a job whose run died with the killed process (the reclaim counts it).
    const attempts = new Map(rows.map((r) => [Number(r.attempts), Number(r.n)]));
    expect([...attempts.keys()].every((n) => n === 1 || n === 2)).toBe(true);
    expect(attempts.get(1)).toBeGreaterThan(JOBS * 0.9);
    expect(runs).toBeGreaterThanOrEqual(JOBS * (TIMES + 1));
    const finals = await finalizeCounts(app);
    expect(finals.size).toBe(JOBS);
    expect([...finals.values()].every((n) => n === 1)).toBe(true);
    expect(await app.count(`state <> 'done' OR lease_owner IS NOT NULL`)).toBe(0);
  }, 240_000);
});

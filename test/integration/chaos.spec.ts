import type { GraphNode, JobState } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { finalizeCounts, installProbes } from '../support/probe-tables';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

/**
 * Worker processes run a mixed workload while a controller SIGKILLs a random one every few
 * seconds and starts a replacement. `npm test` runs the short variant; `npm run test:chaos`
 * the long one (CHAOS_JOBS, CHAOS_WORKERS, CHAOS_KILL_EVERY_MS, CHAOS_JOB_MS; CHAOS_TENANTS, the
 * groups the jobs spread over, default 40).
 */
const JOBS = Number(process.env.CHAOS_JOBS ?? 5_000);
const WORKERS = Number(process.env.CHAOS_WORKERS ?? 3);
const KILL_EVERY_MS = Number(process.env.CHAOS_KILL_EVERY_MS ?? 1_500);
const JOB_MS = Number(process.env.CHAOS_JOB_MS ?? 60);
const CONCURRENCY = 8;
const TENANTS = Number(process.env.CHAOS_TENANTS ?? 40);
// The run's bound scales with its size: the 5,000-job run takes 10–40 s here, the 50,000-job one
// about 60 s alone and much longer beside the 100,000-job long run on two cores. What must hold
// whatever the load is progress: a run with open jobs and no job finished for STALL_MS is stuck
// (the leases are 2 s, so every lost attempt is back within a few seconds).
const BUDGET_MS = Math.max(240_000, JOBS * 20);
const STALL_MS = 60_000;

/** A deterministic PRNG: the same workload every run. */
function rng(seed: number): () => number {
  return () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
}

function workload(): { nodes: GraphNode[]; expected: Map<string, JobState>; plannedRetries: number } {
  const random = rng(7);
  const nodes: GraphNode[] = [];
  const expected = new Map<string, JobState>();
  let plannedRetries = 0;
  const job = (ref: string, extra: Partial<GraphNode> = {}, fail?: 'once' | 'always'): GraphNode => {
    if (fail === 'once') plannedRetries++;
    // Attempts are explicit: the enqueuing process has no 'chaos' handler whose default could apply,
    // and every kill consumes an attempt of each job the killed worker held (running or prefetched).
    return { ref, type: 'chaos', maxAttempts: 25, args: { ms: Math.floor(random() * JOB_MS * 2), fail }, ...extra } as GraphNode;
  };
  // DAGs: a container of 8 workers, a join over them, and a job after both; every 5th graph has
  // a child that fails for good, so its container fails and the join and the after job are cancelled.
  // Jobs belong to more tenants than a worker has slots, so the claims go through the fair-share
  // rotation (its shared cursor, the walk) while workers die.
  const graphs = Math.floor((JOBS * 0.4) / 11);
  for (let g = 0; g < graphs; g++) {
    const broken = g % 5 === 0;
    const group = `t${g % TENANTS}`;
    nodes.push({ ref: `g${g}.box`, type: 'container', group });
    expected.set(`g${g}.box`, broken ? 'failed' : 'done');
    for (let c = 0; c < 8; c++) {
      const fail = broken && c === 3 ? 'always' : c === 5 ? 'once' : undefined;
      nodes.push(job(`g${g}.c${c}`, { parent: `g${g}.box`, group }, fail));
      expected.set(`g${g}.c${c}`, fail === 'always' ? 'failed' : 'done');
    }
    nodes.push(job(`g${g}.join`, { dependsOn: Array.from({ length: 8 }, (_, c) => `g${g}.c${c}`), group }));
    expected.set(`g${g}.join`, broken ? 'cancelled' : 'done');
    nodes.push(job(`g${g}.after`, { dependsOn: [`g${g}.box`, `g${g}.join`], group }));
    expected.set(`g${g}.after`, broken ? 'cancelled' : 'done');
  }
  for (let i = 0; nodes.length < JOBS; i++) {
    const r = random();
    const fail = r < 0.02 ? 'always' : r < 0.12 ? 'once' : undefined;
    nodes.push(job(`j${i}`, { group: `t${i % TENANTS}` }, fail));
    expected.set(`j${i}`, fail === 'always' ? 'failed' : 'done');
  }
  return { nodes, expected, plannedRetries };
}

describeDialects(`chaos: ${JOBS} jobs, ${WORKERS} workers, SIGKILL every ${KILL_EVERY_MS} ms`, (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['chaos'] });
    await installProbes(app);
  });
  afterAll(async () => {
    workers.forEach((w) => w.kill());
    await app?.close();
  });

  it('ends with every job in its expected terminal state, each finalized once, no lease left', async () => {
    const { nodes, expected, plannedRetries } = workload();
    const ids: Record<string, number> = {};
    const chunk = 11 * 180; // graphs (11 nodes each) come first: a chunk never splits one
    for (let i = 0; i < nodes.length; i += chunk) Object.assign(ids, await app.queue.enqueueGraph(nodes.slice(i, i + chunk)));
    const options = { ...db.options(), concurrency: CONCURRENCY, pollIntervalMs: 50, leaseTtlMs: 2_000, heartbeatIntervalMs: 400, reclaimIntervalMs: 250, retryBackoff: { baseMs: 20, maxMs: 200 } };
    const spawn = () => {
      const w = new WorkerProcess('engine.worker', options);
      workers.push(w);
      return w;
    };
    for (let i = 0; i < WORKERS; i++) spawn();
    await Promise.all(workers.map((w) => w.waitFor('ready')));

    const started = Date.now();
    let kills = 0;
    const killed = new Set<string>(); // the executions table names a worker by its pid
    const random = rng(11);
    const open = () => app.count(`state NOT IN ('done', 'failed', 'cancelled')`);
    let fewest = Infinity;
    let progressAt = Date.now();
    for (let left = await open(); left > 0; left = await open()) {
      if (left < fewest) [fewest, progressAt] = [left, Date.now()];
      if (Date.now() - progressAt > STALL_MS) throw new Error(`chaos run stalled: ${left} jobs open, none finished for ${STALL_MS} ms`);
      if (Date.now() - started > BUDGET_MS) throw new Error(`chaos run did not finish within ${BUDGET_MS} ms: ${left} jobs open`);
      await new Promise((r) => setTimeout(r, KILL_EVERY_MS));
      if ((await open()) === 0) break;
      const alive = workers.filter((w) => !w.dead);
      const victim = alive[Math.floor(random() * alive.length)];
      victim.kill('SIGKILL');
      killed.add(String(victim.pid));
      kills++;
      await spawn().waitFor('ready');
    }
    const elapsed = Date.now() - started;

    // Every job reached the state its design implies.
    const rows = await app.rows(`SELECT id, state, result, attempts, last_error FROM jobs`);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const wrong: string[] = [];
    for (const [ref, state] of expected) {
      const row = byId.get(ids[ref]);
      if (row?.state !== state) wrong.push(`${ref}: ${row?.state} ≠ ${state} after ${row?.attempts} attempt(s): ${String(row?.last_error).slice(0, 160)}`);
    }
    expect(wrong.slice(0, 10)).toEqual([]);

    // Finalized exactly once (every transition to done or failed is audited by a trigger)...
    const counts = await finalizeCounts(app);
    const twice = [...counts].filter(([, n]) => n > 1);
    expect(twice).toEqual([]);
    const terminalRun = rows.filter((r) => r.state === 'done' || r.state === 'failed').length;
    expect(counts.size).toBe(terminalRun);
    // ...with exactly one stored result for each done job, its own.
    for (const r of rows.filter((x) => x.state === 'done' && x.result !== null)) {
      const result = JSON.parse(String(r.result));
      if (result) expect(result.id).toBe(Number(r.id));
    }
    // No lease left behind.
    expect(await app.count(`lease_owner IS NOT NULL OR lease_expires IS NOT NULL`)).toBe(0);

    // At-least-once: re-executions are bounded by what the kills could interrupt.
    const [{ n: executions }] = await app.rows(`SELECT COUNT(*) AS n FROM executions`);
    const [{ n: executed }] = await app.rows(`SELECT COUNT(DISTINCT job_id) AS n FROM executions`);
    const extra = Number(executions) - Number(executed);
    const beyondPlan = Math.max(0, extra - plannedRetries);
    process.stdout.write(
      `[${db.dialect}] chaos: ${nodes.length} jobs in ${elapsed} ms, ${kills} SIGKILLs, ${executions} executions of ${executed} jobs; ` +
        `${extra} re-executions (${plannedRetries} planned retries, ≤ ${beyondPlan} caused by kills; bound ${kills * 2 * CONCURRENCY})\n`,
    );
    // A worker that was never killed never lost a lease: none of its attempts ran again, except
    // the planned failures. (With 8 processes on PostgreSQL, lease renewals that waited for row
    // locks let live workers' leases expire under running jobs.)
    const failsOnce = new Set(nodes.filter((n) => (n.args as { fail?: string } | undefined)?.fail === 'once').map((n) => ids[n.ref!]));
    const runs = await app.rows(`SELECT job_id, worker, attempt FROM executions ORDER BY job_id, attempt`);
    const rerunLive: string[] = [];
    for (let i = 0; i + 1 < runs.length; i++) {
      const [run, next] = [runs[i], runs[i + 1]];
      if (Number(next.job_id) !== Number(run.job_id) || killed.has(String(run.worker))) continue;
      if (failsOnce.has(Number(run.job_id)) && Number(run.attempt) === 1) continue;
      rerunLive.push(`job ${String(run.job_id)}: attempt ${String(run.attempt)} on live worker ${String(run.worker)}, then attempt ${String(next.attempt)} on ${String(next.worker)}`);
    }
    if (rerunLive.length) {
      // What those workers said (lease renewal warnings, finalize errors) is what tells a
      // starved event loop from a defect: seen once in CI, not reproduced since.
      const named = new Set(rerunLive.map((line) => line.match(/live worker (\d+)/)![1]));
      const tails = workers.filter((w) => named.has(String(w.pid))).map((w) => w.logTail(60));
      // And why each of those attempts ended, as recorded with it (its error line).
      const jobIds = rerunLive.slice(0, 10).map((line) => Number(line.match(/^job (\d+)/)![1]));
      const why = await app.rows(`SELECT job_id, attempt, message FROM job_logs WHERE level = 'error' AND job_id IN (${jobIds.join(', ')}) ORDER BY id`);
      const recorded = why.map((r) => `job ${String(r.job_id)} attempt ${String(r.attempt)}: ${String(r.message).split('\n')[0]}`);
      throw new Error(`${rerunLive.length} attempt(s) of live workers ran again:\n${rerunLive.slice(0, 10).join('\n')}\n${recorded.join('\n')}\n${tails.join('\n')}`);
    }
    expect(kills).toBeGreaterThan(0);
    // The claims went through the fair-share rotation: the cursor of the workers' types moved off the start.
    const [cursor] = await app.rows(`SELECT group_key FROM job_queue_rotation WHERE name <> 'fair-share'`);
    if (TENANTS > 1) expect(String(cursor.group_key)).toMatch(/^t\d+$/);
    // A kill loses at most the attempts running (≤ concurrency) and those finished whose result
    // was not yet committed (≤ concurrency, by the scheduler's backpressure).
    expect(beyondPlan).toBeLessThanOrEqual(kills * 2 * CONCURRENCY);
  }, BUDGET_MS + 120_000); // the enqueue and the checks after the run come on top of its budget
});

import { InvalidPauseTargetError } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { finalizeCounts } from '../support/probe-tables';
import { type QueueApp } from '../support/queue-app';
import { probedEnqueuer } from '../support/probed-enqueuer';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

const TYPES = ['crashy', 'wedge', 'counted', 'slow', 'noop', 'chaos'];
const POLL_MS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeDialects('pause / resume / listPaused with 2 worker processes', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];
  const spawnTwo = async (pollIntervalMs = POLL_MS) => {
    const options = { ...db.options(), pollIntervalMs, concurrency: 4 };
    const two = [new WorkerProcess('engine.worker', options), new WorkerProcess('engine.worker', options)];
    workers.push(...two);
    await Promise.all(two.map((w) => w.waitFor('ready')));
    return two;
  };
  const executed = async (where = '1=1') =>
    new Set((await app.rows(`SELECT e.job_id FROM executions e JOIN jobs j ON j.id = e.job_id WHERE ${where}`)).map((r) => Number(r.job_id)));

  const resumeAll = async (a: QueueApp) => {
    for (const p of await a.queue.listPaused()) await a.queue.resume(p as never);
  };
  probedEnqueuer(db, { externalTypes: TYPES, workers, started: (a) => (app = a), reset: resumeAll });

  it('bad targets throw InvalidPauseTargetError and change nothing', async () => {
    for (const bad of [{}, { type: '' }, { type: 'a', group: 'b' }, { colour: 'red' }, 'chaos', null, { group: 7 }, { type: 'a\u0000' }, { group: '\ud800' }]) {
      await expect(app.queue.pause(bad as never)).rejects.toBeInstanceOf(InvalidPauseTargetError);
      await expect(app.queue.resume(bad as never)).rejects.toBeInstanceOf(InvalidPauseTargetError);
    }
    expect(await app.queue.listPaused()).toEqual([]);
    await app.queue.pause({ type: 'chaos' });
    await app.queue.pause({ type: 'chaos' }); // twice is once
    await app.queue.pause({ group: 'acme' });
    expect(await app.queue.listPaused()).toEqual([{ group: 'acme' }, { type: 'chaos' }]);
    await app.queue.resume({ group: 'nobody' }); // not paused: nothing happens
    await app.queue.resume({ group: 'acme' });
    expect(await app.queue.listPaused()).toEqual([{ type: 'chaos' }]);
  });

  it('a paused type: no job starts after pause() + one poll interval, running ones finish, enqueue/find/stats go on, it survives a restart, resume runs the rest', async () => {
    await spawnTwo();
    const total = 400;
    await app.queue.enqueueGraph(Array.from({ length: total }, (_, i) => ({ ref: `j${i}`, type: 'chaos', args: { ms: 40 } })));
    await eventually('work under way', async () => (await executed()).size >= 30, 60_000);
    await app.queue.pause({ type: 'chaos' });
    await sleep(POLL_MS); // one poll interval after pause() returned
    const atDeadline = await executed();
    await sleep(4 * POLL_MS);
    expect((await executed()).size).toBe(atDeadline.size); // nothing started since
    expect(atDeadline.size).toBeLessThan(total);
    await eventually('running jobs finished', async () => (await app.count(`state IN ('leased', 'running')`)) === 0, 30_000);
    const ready = await app.count(`state = 'ready'`);
    expect(ready).toBe(total - (await app.count(`state = 'done'`)));

    // Enqueue still works; paused work is visible in find and counted in stats.
    const extra = await app.queue.enqueue({ type: 'chaos', args: { ms: 0 } });
    expect(extra.state).toBe('ready');
    expect((await app.queue.find({ type: 'chaos', state: 'ready' }, { limit: 1 })).jobs[0].id).toBe(extra.id);
    expect((await app.queue.stats()).byState.ready).toBe(ready + 1);

    // Restart the cluster: the pause is in the database, the new workers honour it from the start.
    for (const w of workers.splice(0)) {
      w.kill('SIGTERM');
      await w.exited;
    }
    await spawnTwo();
    const beforeRestart = (await executed()).size;
    await sleep(4 * POLL_MS);
    expect((await executed()).size).toBe(beforeRestart);
    expect(await app.queue.listPaused()).toEqual([{ type: 'chaos' }]);

    await app.queue.resume({ type: 'chaos' });
    await eventually('all done after resume', async () => (await app.count(`state = 'done'`)) === total + 1, 120_000, 100);
    const twice = await app.rows(`SELECT job_id FROM executions GROUP BY job_id HAVING COUNT(*) > 1`);
    expect(twice).toEqual([]);
    expect(await app.queue.listPaused()).toEqual([]);
  }, 300_000);

  it('a paused group: its jobs wait while other groups run; resume lets them run', async () => {
    await spawnTwo();
    const per = 150;
    await app.queue.enqueueGraph([
      ...Array.from({ length: per }, (_, i) => ({ ref: `a${i}`, type: 'chaos', group: 'acme', args: { ms: 20 } })),
      ...Array.from({ length: per }, (_, i) => ({ ref: `b${i}`, type: 'chaos', group: 'globex', args: { ms: 20 } })),
    ]);
    await eventually('acme under way', async () => (await executed(`j.group_key = 'acme'`)).size >= 10, 60_000);
    await app.queue.pause({ group: 'acme' });
    await sleep(POLL_MS);
    const acmeAtDeadline = (await executed(`j.group_key = 'acme'`)).size;
    await eventually('globex all done', async () => (await app.count(`group_key = 'globex' AND state = 'done'`)) === per, 120_000, 100);
    await sleep(2 * POLL_MS);
    expect((await executed(`j.group_key = 'acme'`)).size).toBe(acmeAtDeadline);
    expect(acmeAtDeadline).toBeLessThan(per);
    expect(await app.count(`group_key = 'acme' AND state IN ('leased', 'running')`)).toBe(0);

    await app.queue.resume({ group: 'acme' });
    await eventually('acme all done', async () => (await app.count(`group_key = 'acme' AND state = 'done'`)) === per, 120_000, 100);
    expect(await app.rows(`SELECT e.job_id, e.worker, e.attempt, e.finished FROM executions e WHERE e.job_id IN (SELECT job_id FROM executions GROUP BY job_id HAVING COUNT(*) > 1)`)).toEqual([]);
  }, 300_000);

  it('a group paused and resumed over and over while its jobs run: every job runs once and is finalized once', async () => {
    // A claim in flight across a pause and the resume after it once handed a job back and still
    // started it, then claimed and started it again. A short poll interval: the workers re-read
    // the pauses every half interval, so more of their reads land inside a claim.
    await spawnTwo(40);
    const per = 600;
    await app.queue.enqueueGraph([
      ...Array.from({ length: per }, (_, i) => ({ ref: `a${i}`, type: 'chaos', group: 'acme', args: { ms: 5 } })),
      ...Array.from({ length: per }, (_, i) => ({ ref: `b${i}`, type: 'chaos', group: 'globex', args: { ms: 5 } })),
    ]);
    let toggles = 0;
    const allDone = async () => (await app.count(`state = 'done'`)) === 2 * per;
    // 2 × 600 jobs of 5 ms on 8 slots take about a second unpaused; acme runs half the time.
    const deadline = Date.now() + 120_000;
    while (!(await allDone()) && Date.now() < deadline) {
      await app.queue.pause({ group: 'acme' });
      await sleep(5 + Math.random() * 30);
      await app.queue.resume({ group: 'acme' });
      await sleep(5 + Math.random() * 30);
      toggles++;
    }
    await eventually('all done', allDone, 30_000, 100);
    expect(toggles).toBeGreaterThan(5);
    expect(await app.rows(`SELECT e.job_id, e.worker, e.attempt FROM executions e WHERE e.job_id IN (SELECT job_id FROM executions GROUP BY job_id HAVING COUNT(*) > 1)`)).toEqual([]);
    const finalized = await finalizeCounts(app);
    expect(finalized.size).toBe(2 * per);
    expect([...finalized.values()].every((n) => n === 1)).toBe(true);
    // A hand-back uncounts its attempt; a lease that expired does not. A claim delivered to no
    // slot left its jobs leased until the lease expired: they ran at attempt 2.
    expect(await app.rows(`SELECT id, attempts FROM jobs WHERE attempts <> 1`)).toEqual([]);
  }, 300_000);
});

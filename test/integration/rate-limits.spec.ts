import { InvalidOptionError } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Start {
  jobId: number;
  type: string;
  group: string;
  at: number;
}

async function starts(app: QueueApp, where = '1=1'): Promise<Start[]> {
  const rows = await app.rows(`SELECT job_id, type, group_key, at_ms FROM rl_starts WHERE ${where} ORDER BY at_ms`);
  return rows.map((r) => ({ jobId: Number(r.job_id), type: String(r.type), group: String(r.group_key), at: Number(r.at_ms) }));
}

/** The most starts inside any half-open window [t, t + windowMs) that begins at a start. */
function maxInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j] < sorted[i] + windowMs) j++;
    max = Math.max(max, j - i);
  }
  return max;
}

/** The starts of the fullest window, for the report when a check fails. */
function fullestWindow(all: Start[], windowMs: number): string {
  const sorted = [...all].sort((a, b) => a.at - b.at);
  let best = { i: 0, n: 0 };
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j].at < sorted[i].at + windowMs) j++;
    if (j - i > best.n) best = { i, n: j - i };
  }
  return sorted.slice(best.i, best.i + best.n).map((s) => `${s.jobId}@+${s.at - sorted[best.i].at}`).join(' ');
}

/** Starts per second after the first window's burst: (starts after the first `limit`) / (last − first start). */
function steadyRate(times: number[], limit: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  return ((sorted.length - limit) / (sorted[sorted.length - 1] - sorted[0])) * 1_000;
}

async function stop(workers: WorkerProcess[]): Promise<void> {
  for (const w of workers) if (!w.dead) w.send('stop');
  await Promise.all(workers.map((w) => w.exited));
}

describeDialects('rate limits', (db) => {
  const worker = (options: Record<string, unknown>) =>
    new WorkerProcess('rate-limit.worker', { ...db.options(), poolSize: 4, ...options });

  async function boot(types: string[]): Promise<QueueApp> {
    const app = await startQueueApp(db, { worker: false, externalTypes: types });
    await app.rows(`DROP TABLE IF EXISTS rl_starts`);
    await app.rows(`CREATE TABLE rl_starts (job_id BIGINT NOT NULL, type VARCHAR(50) NOT NULL, group_key VARCHAR(50) NOT NULL, at_ms BIGINT NOT NULL, worker INT NOT NULL)`);
    await app.rows(`DELETE FROM jobs`);
    return app;
  }

  it('3 processes, 20 per second on one type, 10 s of backlog: never more than 20 starts in any 1 s, at >= 90% of the rate', async () => {
    const app = await boot(['email']);
    const options = { types: ['email'], rateLimits: { types: { email: { limit: 20, intervalMs: 1_000 } } } };
    const workers = [worker(options), worker(options), worker(options)];
    try {
      await Promise.all(workers.map((w) => w.waitFor('ready', 120_000)));
      await app.queue.enqueueGraph(Array.from({ length: 200 }, (_, i) => ({ ref: `e${i}`, type: 'email', args: { ms: 5 } })));
      await eventually('200 emails done', async () => (await app.count(`type = 'email' AND state = 'done'`)) === 200, 60_000, 100);
      const times = (await starts(app)).map((s) => s.at);
      expect(times.length).toBe(200);
      const worst = maxInWindow(times, 1_000);
      const rate = steadyRate(times, 20);
      const perWorker = await app.rows(`SELECT worker, COUNT(*) AS n FROM rl_starts GROUP BY worker`);
      process.stdout.write(
        `[${db.dialect}] rate limit 20/s, 3 processes: max ${worst} starts in any 1 s window, steady rate ${rate.toFixed(2)}/s ` +
          `(${((rate / 20) * 100).toFixed(1)}% of the limit), spread ${perWorker.map((r) => r.n).join('/')} (2 cores shared with other runs)\n`,
      );
      expect(worst).toBeLessThanOrEqual(20);
      expect(rate).toBeGreaterThanOrEqual(18);
      // Not failed, no attempt spent while held back.
      expect(await app.count(`type = 'email' AND attempts <> 1`)).toBe(0);
    } finally {
      workers.forEach((w) => w.dead || w.kill());
      await Promise.all(workers.map((w) => w.exited));
      await app.close();
    }
  });

  it('a group limit and a type limit together; unlimited work is not held up', async () => {
    const app = await boot(['email', 'sms']);
    const options = {
      types: ['email', 'sms'],
      rateLimits: { types: { email: { limit: 10, intervalMs: 1_000 } }, groups: { acme: { limit: 5, intervalMs: 1_000 } } },
    };
    const workers = [worker(options), worker(options), worker(options)];
    try {
      await Promise.all(workers.map((w) => w.waitFor('ready', 120_000)));
      const nodes = [
        ...Array.from({ length: 30 }, (_, i) => ({ ref: `ea${i}`, type: 'email', group: 'acme' })),
        ...Array.from({ length: 40 }, (_, i) => ({ ref: `eo${i}`, type: 'email', group: 'other' })),
        ...Array.from({ length: 20 }, (_, i) => ({ ref: `sa${i}`, type: 'sms', group: 'acme' })),
        ...Array.from({ length: 100 }, (_, i) => ({ ref: `so${i}`, type: 'sms', group: 'other' })),
      ];
      const enqueuedAt = Date.now();
      await app.queue.enqueueGraph(nodes);
      await eventually('all done', async () => (await app.count(`state = 'done'`)) === nodes.length, 60_000, 100);
      const all = await starts(app);
      const email = all.filter((s) => s.type === 'email').map((s) => s.at);
      const acme = all.filter((s) => s.group === 'acme').map((s) => s.at);
      const unlimited = all.filter((s) => s.type === 'sms' && s.group === 'other').map((s) => s.at);
      const lastUnlimited = Math.max(...unlimited) - enqueuedAt;
      process.stdout.write(
        `[${db.dialect}] email 10/s + group acme 5/s: max ${maxInWindow(email, 1_000)} email and ${maxInWindow(acme, 1_000)} acme starts in any 1 s; ` +
          `emails took ${((Math.max(...email) - Math.min(...email)) / 1_000).toFixed(1)} s, unlimited sms done ${lastUnlimited} ms after enqueue\n`,
      );
      expect(all.length).toBe(nodes.length);
      if (maxInWindow(email, 1_000) > 10) process.stdout.write(`fullest email window: ${fullestWindow(all.filter((s) => s.type === 'email'), 1_000)}\n`);
      if (maxInWindow(acme, 1_000) > 5) process.stdout.write(`fullest acme window: ${fullestWindow(all.filter((s) => s.group === 'acme'), 1_000)}\n`);
      expect(maxInWindow(email, 1_000)).toBeLessThanOrEqual(10);
      expect(maxInWindow(acme, 1_000)).toBeLessThanOrEqual(5);
      // 70 emails at 10/s take at least 6 s; 50 acme jobs at 5/s at least 9 s; the 100 unlimited ones run at once.
      expect(Math.max(...email) - Math.min(...email)).toBeGreaterThanOrEqual(6_000);
      expect(Math.max(...acme) - Math.min(...acme)).toBeGreaterThanOrEqual(9_000);
      expect(lastUnlimited).toBeLessThan(5_000);
      expect(await app.count(`attempts <> 1`)).toBe(0);
    } finally {
      workers.forEach((w) => w.dead || w.kill());
      await Promise.all(workers.map((w) => w.exited));
      await app.close();
    }
  });

  it('a SIGKILLed process leaves no burst: reclaimed jobs go through the window like any other', async () => {
    const app = await boot(['email']);
    const options = {
      types: ['email'],
      leaseTtlMs: 2_000,
      heartbeatIntervalMs: 500,
      reclaimIntervalMs: 200,
      rateLimits: { types: { email: { limit: 20, intervalMs: 1_000 } } },
    };
    const workers = [worker(options), worker(options), worker(options)];
    try {
      await Promise.all(workers.map((w) => w.waitFor('ready', 120_000)));
      // Jobs that run 1.2 s: the killed process holds several when it dies.
      await app.queue.enqueueGraph(Array.from({ length: 160 }, (_, i) => ({ ref: `e${i}`, type: 'email', args: { ms: 1_200 } })));
      await sleep(3_000);
      // The victim: the process holding the most jobs right now.
      const held = await app.rows(`SELECT lease_owner, COUNT(*) AS n FROM jobs WHERE state IN ('leased', 'running') GROUP BY lease_owner ORDER BY COUNT(*) DESC`);
      const victim = workers.find((w) => held.length && String(held[0].lease_owner).includes(`:${w.pid}:`)) ?? workers[0];
      victim.kill('SIGKILL');
      await victim.exited;
      const killedAt = Date.now();
      await eventually('160 emails done', async () => (await app.count(`type = 'email' AND state = 'done'`)) === 160, 90_000, 100);
      const all = await starts(app);
      const rerun = await app.count(`type = 'email' AND attempts = 2`);
      const after = all.filter((s) => s.at >= killedAt).map((s) => s.at);
      process.stdout.write(
        `[${db.dialect}] SIGKILL under a 20/s limit: ${rerun} job(s) reclaimed and run again, max ${maxInWindow(all.map((s) => s.at), 1_000)} starts ` +
          `in any 1 s overall, ${maxInWindow(after, 1_000)} after the kill\n`,
      );
      expect(rerun).toBeGreaterThan(0);
      expect(maxInWindow(all.map((s) => s.at), 1_000)).toBeLessThanOrEqual(20);
    } finally {
      workers.forEach((w) => w.dead || w.kill());
      await Promise.all(workers.map((w) => w.exited));
      await app.close();
    }
  });

  it('bad rate limits: typed errors at start-up, before anything is written', async () => {
    for (const rateLimits of [
      { types: { email: { limit: 0, intervalMs: 1_000 } } },
      { types: { email: { limit: -5, intervalMs: 1_000 } } },
      { groups: { acme: { limit: 5, intervalMs: 0 } } },
      { groups: { acme: { limit: 5, intervalMs: -1 } } },
      { groups: { acme: { limit: 5 } } },
      { types: { email: { limit: 1.5, intervalMs: 1_000 } } },
      { typez: {} },
    ]) {
      await expect(startQueueApp(db, { worker: false, externalTypes: ['email'], rateLimits } as never)).rejects.toThrow(InvalidOptionError);
    }
  });
});

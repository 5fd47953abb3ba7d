import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { JobHandler, type JobContext } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { SqlResult } from '../../lib/database/sql-executor';
import { sql } from '../../lib/database/sql';
import { describeDialects } from '../support/describe-dialects';
import { buildDashboardUi, csrfToken, startDashboardApp, type DashboardApp } from '../support/dashboard-app';
import { eventually } from '../support/wait';

const XSS = '<img src=x onerror=alert(1)></script><script>alert(2)</script>';
/** fetch's json() is typed unknown; these specs read the shapes they assert. */
const asAny = (v: unknown): any => v;
const AUTH = { 'x-test-auth': 'letmein' };

/** Whether a `held` job's handler runs now, and what ends it (each waits for the test to let it go). */
let heldRunning = false;
let releaseHeld: () => void = () => undefined;

/**
 * `chatty` logs each of `lines`; with `failFirst` its first attempt then fails (retried after the
 * 1 s backoff). `held` runs until the test calls releaseHeld(): in flight for as long as it looks.
 */
@Injectable()
class LogTestHandlers {
  @JobHandler('held', { maxAttempts: 1 })
  async held() {
    await new Promise<void>((r) => {
      releaseHeld = r;
      heldRunning = true;
    });
    heldRunning = false;
    return null;
  }

  @JobHandler('chatty', { maxAttempts: 2 })
  async chatty(args: { lines: string[]; failFirst?: boolean }, ctx: JobContext) {
    for (const line of args.lines) ctx.log(`${line}${args.failFirst ? ` (attempt ${ctx.attempt})` : ''}`);
    if (args.failFirst && ctx.attempt === 1) throw new Error('first attempt fails on purpose');
    return { logged: args.lines.length };
  }
}

/**
 * The dashboard's HTTP surface on each dialect, over real HTTP on Express, under a global prefix:
 * auth on every route, CSRF on every action, typed 400s, bounded responses, read-only refusals.
 */
describeDialects('dashboard API', (db) => {
  let d: DashboardApp;
  let ro: DashboardApp;
  let token: string;
  const get = (path: string, headers: Record<string, string> = AUTH) => fetch(`${d.url}${path}`, { headers });
  const post = (base: string, path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const action = (path: string, body: unknown = {}, extra: Record<string, string> = {}) => post(d.url, path, body, { ...AUTH, 'x-job-queue-csrf': token, ...extra });

  beforeAll(async () => {
    buildDashboardUi();
    const auth = (req: { headers: Record<string, string> }) => req.headers['x-test-auth'] === 'letmein';
    d = await startDashboardApp(db, { path: '/queue', auth }, {
      globalPrefix: 'admin',
      queue: { maxArgsBytes: 8 * 1024 * 1024, externalTypes: ['listed', 'types-card'] },
      providers: [LogTestHandlers],
    });
    ro = await startDashboardApp(db, { path: 'ops/jobs', auth: 'public', readOnly: true }, { queue: { concurrency: 1 } });
    token = await csrfToken(d.url, AUTH);
  });
  afterAll(async () => {
    await d?.close();
    await ro?.close();
  });

  it('answers 401 on every route, page, assets, API and actions, without the auth decision', async () => {
    const job = await d.queue.enqueue({ type: 'work', args: { secret: 'tenant-data' } });
    for (const path of ['', '/', '/assets/app.js', '/assets/app.css', '/assets/elk-worker.js', '/api/overview', '/api/jobs', `/api/jobs/${job.id}`, `/api/jobs/${job.id}/logs`, `/api/graph/${job.id}`]) {
      const res = await get(path, {});
      expect([path, res.status]).toEqual([path, 401]);
      const text = await res.text();
      expect(text).not.toContain('tenant-data');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
    for (const path of [`/api/jobs/${job.id}/cancel`, `/api/jobs/${job.id}/retry`, `/api/jobs/${job.id}/remove`, `/api/jobs/${job.id}/run-now`, '/api/jobs/cancel-many', '/api/jobs/retry-many', '/api/jobs/remove-many', '/api/jobs/run-now-many', '/api/pause', '/api/resume', '/api/schedules/any/run-now', '/api/schedules/any/remove', `/api/jobs/${job.id}/reschedule`, '/api/jobs/reschedule-many']) {
      const res = await post(d.url, path, { type: 'work' }, { 'x-job-queue-csrf': token });
      expect([path, res.status]).toEqual([path, 401]);
    }
    // An auth function that throws denies too.
    expect((await get('/api/overview', { 'x-test-auth': 'wrong' })).status).toBe(401);
  });

  it('serves the page under the global prefix with a strict CSP and no data in it', async () => {
    const res = await get('');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).toContain('src="/admin/queue/assets/app.js"');
    expect(html).not.toMatch(/<script>[^<]/); // no inline script
    const js = await get('/assets/app.js');
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect((await js.text()).length).toBeGreaterThan(10_000);
    // The graph page's layout engine is its own asset, loaded into a worker by the graph page only.
    const worker = await get('/assets/elk-worker.js');
    expect(worker.headers.get('content-type')).toMatch(/javascript/);
    expect((await worker.text()).length).toBeGreaterThan(1_000_000);
    expect((await get('/assets/..%2Fsecret')).status).toBe(404);
  });

  it('overview: counts, groups, throughput, workers, paused', async () => {
    const failed = await d.queue.enqueue({ type: 'boom', args: { message: 'kaput' }, group: 'acme' });
    const ok = await d.queue.enqueue({ type: 'work', group: 'acme' });
    await d.queue.waitFor(failed.id);
    await d.queue.waitFor(ok.id);
    await d.queue.pause({ type: 'paused-type' });
    await eventually('overview shows the failure', async () => (await (await get('/api/overview')).json().then(asAny)).counts.failed >= 1);
    const o = await (await get('/api/overview')).json().then(asAny);
    expect(o.counts.failed).toBeGreaterThanOrEqual(1);
    expect(o.counts.done).toBeGreaterThanOrEqual(1);
    expect(o.countCap).toBe(100_000);
    expect(o.throughput).toHaveLength(60);
    const lastMinutes = o.throughput.slice(-2).reduce((n: number, t: { done: number; failed: number }) => n + t.done + t.failed, 0);
    expect(lastMinutes).toBeGreaterThanOrEqual(2);
    expect(o.paused).toEqual([{ type: 'paused-type' }]);
    expect(Array.isArray(o.workers)).toBe(true);
    await d.queue.resume({ type: 'paused-type' });
  });

  it('overview types: waiting, ready, in flight and failed per type, paused ones flagged; 3,000 types answered bounded, the busiest 50', async () => {
    const jq = d.app.get(JobQueueDatabase);
    const later = new Date(Date.now() + 3_600_000);
    const ids: number[] = [];
    for (let i = 0; i < 2; i++) ids.push((await d.queue.enqueue({ type: 'types-card', args: { i } })).id);
    const graph = await d.queue.enqueueGraph([
      { ref: 'up', type: 'types-card', runAfter: later },
      { ref: 'down', type: 'types-card', dependsOn: ['up'] },
    ]);
    ids.push(graph.up, graph.down);
    const held = await d.queue.enqueue({ type: 'held' });
    const failed = await d.queue.enqueue({ type: 'boom', args: { message: 'for the types card' } });
    await d.queue.pause({ type: 'types-card' });
    const overview = async () => asAny(await (await get('/api/overview')).json());
    const typeOf = (o: any, type: string) => o.types.find((t: { type: string }) => t.type === type);
    const names = Array.from({ length: 3_000 }, (_, i) => `many-type-${String(i).padStart(4, '0')}`);
    try {
      await d.queue.waitFor(failed.id);
      await eventually('the held job in flight', async () => heldRunning && typeOf(await overview(), 'held')?.running === 1, 20_000, 50);
      const o = await overview();
      expect(typeOf(o, 'types-card')).toEqual({ type: 'types-card', waiting: 1, ready: 3, running: 0, failed: 0, paused: true });
      expect(typeOf(o, 'held')).toEqual({ type: 'held', waiting: 0, ready: 0, running: 1, failed: 0, paused: false });
      expect(typeOf(o, 'boom').failed).toBeGreaterThanOrEqual(1);
      expect(o.typesPartial).toBe(false);
      releaseHeld();
      expect((await d.queue.waitFor(held.id)).state).toBe('done');
      await eventually('the held job gone from the types', async () => typeOf(await overview(), 'held') === undefined, 20_000, 50);

      // Thousands of types: the 50 with the most open work, then the most failed, said to be partial.
      for (let i = 0; i < names.length; i += 500) {
        const rows = names.slice(i, i + 500).map((n) => sql`(${n}, '{}', 'ready', ${jq.dialect.timeParam(later)}, ${jq.dialect.now()}, ${jq.dialect.now()})`);
        await jq.run(sql`INSERT INTO jobs (type, args, state, run_after, created_at, updated_at) VALUES ${sql.join(rows)}`);
      }
      // The overview is a snapshot shared for snapshotTtlMs: the next one has them.
      const text: string = await eventually('the many types shown', async () => {
        const body = await (await get('/api/overview')).text();
        return asAny(JSON.parse(body)).types.length === 50 ? body : null;
      }, 20_000, 100);
      const many = asAny(JSON.parse(text));
      expect(many.typesPartial).toBe(true);
      expect(typeOf(many, 'types-card')).toMatchObject({ ready: 3, waiting: 1, paused: true });
      const work = many.types.map((t: { waiting: number; ready: number; running: number }) => t.waiting + t.ready + t.running);
      expect(work).toEqual([...work].sort((a, b) => b - a));
      expect(text.length).toBeLessThan(30_000);
    } finally {
      releaseHeld();
      await d.queue.resume({ type: 'types-card' });
      await jq.run(sql`DELETE FROM jobs WHERE type LIKE 'many-type-%'`);
      for (const id of ids) await d.queue.cancel(id).catch(() => undefined);
    }
  });

  it("a job in flight names its worker and lease; the worker's jobs are listed by ?worker=; settled, neither", async () => {
    const held = await d.queue.enqueue({ type: 'held' });
    try {
      await eventually('the held job running', async () => heldRunning && (await d.queue.get(held.id))!.state === 'running', 20_000, 50);
      const job = asAny(await (await get(`/api/jobs/${held.id}`)).json());
      expect(typeof job.worker).toBe('string');
      expect(Date.parse(job.leaseExpiresAt)).toBeGreaterThan(Date.now() - 60_000);
      // The overview's workers card names the same worker, and its jobs are those it holds.
      const o = await eventually('the worker on the overview', async () => {
        const view = asAny(await (await get('/api/overview')).json());
        return view.workers.some((w: { owner: string }) => w.owner === job.worker) ? view : undefined;
      }, 20_000, 50);
      expect(o.workers.find((w: { owner: string }) => w.owner === job.worker).inFlight).toBeGreaterThanOrEqual(1);
      const page = asAny(await (await get(`/api/jobs?${new URLSearchParams({ worker: job.worker })}`)).json());
      expect(page.jobs.map((j: { id: number }) => j.id)).toContain(held.id);
      expect(page.jobs.every((j: { state: string }) => j.state === 'leased' || j.state === 'running')).toBe(true);
      expect(asAny(await (await get(`/api/jobs?${new URLSearchParams({ worker: job.worker, state: 'done' })}`)).json()).jobs).toEqual([]);
      expect(asAny(await (await get(`/api/jobs?${new URLSearchParams({ worker: 'no-such-worker' })}`)).json()).jobs).toEqual([]);
      const bad = await get(`/api/jobs?${new URLSearchParams({ worker: 'w'.repeat(129) })}`);
      expect(bad.status).toBe(400);
      expect(asAny(await bad.json()).message).toMatch(/worker/);
    } finally {
      releaseHeld();
    }
    expect((await d.queue.waitFor(held.id)).state).toBe('done');
    expect(asAny(await (await get(`/api/jobs/${held.id}`)).json())).toMatchObject({ worker: null, leaseExpiresAt: null });
  });

  it('jobs: filters by state, type, group, args and time, keyset pages, and 400 on bad filters', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 23; i++) ids.push((await d.queue.enqueue({ type: 'listed', args: { tenant: i % 2 ? 'odd' : 'even', i }, group: 'paging' })).id);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams({ type: 'listed', group: 'paging', limit: '10', ...(cursor ? { cursor } : {}) });
      const page: any = await (await get(`/api/jobs?${q}`)).json().then(asAny);
      expect(page.jobs.length).toBeLessThanOrEqual(10);
      seen.push(...page.jobs.map((j: { id: number }) => j.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const odd = await (await get(`/api/jobs?${new URLSearchParams({ args: '{"tenant":"odd"}', state: 'ready,waiting' })}`)).json().then(asAny);
    expect(odd.jobs.map((j: { id: number }) => j.id).sort((a: number, b: number) => a - b)).toEqual(ids.filter((_, i) => i % 2));
    expect(odd.jobs[0].args).toMatchObject({ truncated: false });
    const future = await (await get(`/api/jobs?${new URLSearchParams({ type: 'listed', after: '2999-01-01T00:00:00Z' })}`)).json().then(asAny);
    expect(future.jobs).toEqual([]);
    for (const bad of ['args=%7Bnot%20json', 'args=%5B1%5D', 'state=nope', 'limit=101', 'limit=0', 'after=yesterday', 'cursor=forged', 'parent=-1', 'type=a%00b', 'error=x%00', `args=${encodeURIComponent('{"tenant":"\\u0000"}')}`]) {
      const res = await get(`/api/jobs?${bad}`);
      expect([bad, res.status]).toEqual([bad, 400]);
      expect((await res.json().then(asAny)).error).toMatch(/INVALID_QUERY|INVALID_CURSOR/);
    }
    expect((await get('/api/jobs/abc')).status).toBe(400);
    expect((await get('/api/jobs/999999999')).status).toBe(404);
  });

  it('schedules: pages by name, filters by type, bounds args, counts all, and 400 on bad input', async () => {
    const names: string[] = [];
    for (let i = 0; i < 23; i++) {
      const name = `dash-${String(i).padStart(2, '0')}`;
      names.push(name);
      // One schedule's args hold markup and 200 KB: the table gets a short preview, as text.
      const args = i === 7 ? { html: XSS, blob: 'y'.repeat(200 * 1024) } : { i };
      await d.queue.schedule({ name, cron: '0 0 1 1 *', type: i % 2 ? 'listed' : 'boom', args, group: i === 7 ? XSS.slice(0, 60) : undefined });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let count = 0;
    do {
      const q = new URLSearchParams({ limit: '10', ...(cursor ? { cursor } : {}) });
      const res = await get(`/api/schedules?${q}`);
      const text = await res.text();
      expect(text.length).toBeLessThan(20_000);
      const page = asAny(JSON.parse(text));
      expect(page.schedules.length).toBeLessThanOrEqual(10);
      seen.push(...page.schedules.map((s: { name: string }) => s.name));
      ({ count } = page);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.filter((n) => n.startsWith('dash-'))).toEqual(names);
    expect(count).toBe(seen.length);
    const odd = asAny(await (await get(`/api/schedules?${new URLSearchParams({ type: 'listed', limit: '100' })}`)).json());
    expect(odd.schedules.map((s: { name: string }) => s.name)).toEqual(names.filter((_, i) => i % 2));
    const evil = odd.schedules.find((s: { name: string }) => s.name === 'dash-07');
    expect(evil).toMatchObject({ type: 'listed', cron: '0 0 1 1 *', timeZone: 'UTC', group: XSS.slice(0, 60), lastRunAt: null, args: { truncated: true } });
    expect(evil.args.text).toContain(XSS.slice(0, 20));
    expect(evil.args.length).toBeGreaterThan(200 * 1024);
    expect(new Date(evil.nextRunAt).getTime()).toBeGreaterThan(Date.now());
    expect(evil.dormant).toBe(false);
    // An @Recurring whose declaration lapsed (no running process declares it) shows as dormant.
    const jq = d.app.get(JobQueueDatabase);
    await jq.run(sql`UPDATE job_queue_schedules SET declared_until = ${jq.dialect.timeParam(new Date(Date.now() - 60_000))} WHERE name = 'dash-09'`);
    const lapsed = asAny(await (await get(`/api/schedules?${new URLSearchParams({ type: 'listed', limit: '100' })}`)).json());
    expect(lapsed.schedules.filter((s: { dormant: boolean }) => s.dormant).map((s: { name: string }) => s.name)).toEqual(['dash-09']);
    const tenant = asAny(await (await get(`/api/schedules?${new URLSearchParams({ group: XSS.slice(0, 60) })}`)).json());
    expect(tenant.schedules.map((s: { name: string }) => s.name)).toEqual(['dash-07']);
    for (const bad of ['limit=101', 'limit=0', 'cursor=forged', 'type=a&type=b', 'group=a&group=b', `group=${'g'.repeat(201)}`, 'type=a%00']) {
      const res = await get(`/api/schedules?${bad}`);
      expect([bad, res.status]).toEqual([bad, 400]);
      expect((await res.json().then(asAny)).error).toMatch(/INVALID_QUERY|INVALID_CURSOR/);
    }
    const first = asAny(await (await get(`/api/schedules?${new URLSearchParams({ type: 'listed', limit: '2' })}`)).json());
    expect((await get(`/api/schedules?${new URLSearchParams({ cursor: first.nextCursor })}`)).status).toBe(400); // a cursor of another filter
    expect((await get('/api/schedules', {})).status).toBe(401);
    for (const name of names) await d.queue.unschedule(name);
  });

  it('returns XSS payloads as data, and job pages bounded however large the args', async () => {
    const evil = await d.queue.enqueue({ type: 'boom', group: XSS.slice(0, 60), args: { message: XSS, html: XSS } });
    await d.queue.waitFor(evil.id);
    const job = await (await get(`/api/jobs/${evil.id}`)).json().then(asAny);
    expect(job.group).toBe(XSS.slice(0, 60));
    expect(job.error.text).toContain(XSS);
    expect(JSON.parse(job.args.text)).toEqual({ message: XSS, html: XSS });
    const page = await (await get('')).text();
    expect(page).not.toContain('<img');

    const big = await d.queue.enqueue({ type: 'listed', args: { blob: 'x'.repeat(5 * 1024 * 1024) } });
    const res = await get(`/api/jobs/${big.id}`);
    const text = await res.text();
    expect(text.length).toBeLessThan(100_000);
    const body = JSON.parse(text);
    expect(body.args).toMatchObject({ truncated: true });
    expect(body.args.length).toBeGreaterThan(5 * 1024 * 1024);
    expect(body.args.text).toMatch(/… \[truncated\]$/);
    const list = await get(`/api/jobs?type=listed&limit=100`);
    expect((await list.text()).length).toBeLessThan(100 * 1_000);
  });

  it('job log: the lines a handler logged, oldest first, 200 a page by cursor', async () => {
    const lines = Array.from({ length: 450 }, (_, i) => `line ${i}`);
    const before = Date.now();
    const job = await d.queue.enqueue({ type: 'chatty', args: { lines } });
    expect((await d.queue.waitFor(job.id, { timeoutMs: 30_000 })).state).toBe('done');
    const seen: Array<{ attempt: number; at: string; message: string }> = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`/api/jobs/${job.id}/logs${cursor ? `?${new URLSearchParams({ cursor })}` : ''}`);
      expect(res.status).toBe(200);
      const page = asAny(await res.json());
      sizes.push(page.logs.length);
      seen.push(...page.logs);
      cursor = page.nextCursor;
    } while (cursor && sizes.length < 10);
    expect(sizes).toEqual([200, 200, 50]);
    expect(seen.map((l) => l.message)).toEqual(lines);
    expect(seen.every((l) => l.attempt === 1)).toBe(true);
    for (const l of seen) {
      expect(l.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(new Date(l.at).getTime()).toBeGreaterThanOrEqual(before - 1_000);
      expect(new Date(l.at).getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    }
    expect(Object.keys(seen[0]).sort()).toEqual(['at', 'attempt', 'level', 'message']);
    // A smaller page on request; never more than 200.
    const small = asAny(await (await get(`/api/jobs/${job.id}/logs?limit=20`)).json());
    expect([small.logs.length, small.logs[19].message, typeof small.nextCursor]).toEqual([20, 'line 19', 'string']);
    const rest = asAny(await (await get(`/api/jobs/${job.id}/logs?${new URLSearchParams({ cursor: small.nextCursor, limit: '5' })}`)).json());
    expect(rest.logs.map((l: { message: string }) => l.message)).toEqual(['line 20', 'line 21', 'line 22', 'line 23', 'line 24']);

    // A job that logged nothing: an empty page, no cursor.
    const quiet = await d.queue.enqueue({ type: 'work' });
    await d.queue.waitFor(quiet.id, { timeoutMs: 30_000 });
    expect(asAny(await (await get(`/api/jobs/${quiet.id}/logs`)).json())).toEqual({ logs: [], nextCursor: null });
  });

  it("job log: each attempt's lines, all of them or one attempt's", async () => {
    const job = await d.queue.enqueue({ type: 'chatty', args: { lines: ['a', 'b'], failFirst: true } });
    expect((await d.queue.waitFor(job.id, { timeoutMs: 30_000 })).state).toBe('done');
    const all = asAny(await (await get(`/api/jobs/${job.id}/logs`)).json());
    expect(all.logs.map((l: { attempt: number; level: string; message: string }) => [l.attempt, l.level, l.message.split('\n')[0]])).toEqual([
      [1, 'info', 'a (attempt 1)'],
      [1, 'info', 'b (attempt 1)'],
      [1, 'error', 'Error: first attempt fails on purpose'], // the attempt's error, written with its failure
      [2, 'info', 'a (attempt 2)'],
      [2, 'info', 'b (attempt 2)'],
    ]);
    const second = asAny(await (await get(`/api/jobs/${job.id}/logs?attempt=2`)).json());
    expect(second).toEqual({ logs: all.logs.slice(3), nextCursor: null });
    expect(asAny(await (await get(`/api/jobs/${job.id}/logs?level=error`)).json())).toEqual({ logs: [all.logs[2]], nextCursor: null });
    expect(asAny(await (await get(`/api/jobs/${job.id}/logs?attempt=3`)).json())).toEqual({ logs: [], nextCursor: null });
  });

  it('job log: typed 400s for bad input, 404 for an unknown or removed job, 401 without auth', async () => {
    const job = await d.queue.enqueue({ type: 'chatty', args: { lines: ['one', 'two', 'three'] } });
    await d.queue.waitFor(job.id, { timeoutMs: 30_000 });
    const first = asAny(await (await get(`/api/jobs/${job.id}/logs?limit=1`)).json());
    expect(first.logs.map((l: { message: string }) => l.message)).toEqual(['one']);
    // A cursor altered by a byte, or made up, is refused, not read from wherever it points.
    const alter = (at: number) => first.nextCursor.slice(0, at) + (first.nextCursor[at] === 'A' ? 'B' : 'A') + first.nextCursor.slice(at + 1);
    for (const cursor of ['forged', alter(first.nextCursor.length - 1), alter(10), 'x'.repeat(5_000), `<script>${first.nextCursor}`]) {
      const res = await get(`/api/jobs/${job.id}/logs?${new URLSearchParams({ cursor })}`);
      const body = asAny(await res.json());
      expect([cursor.slice(0, 40), res.status, body.error]).toEqual([cursor.slice(0, 40), 400, 'INVALID_CURSOR']);
    }
    // A genuine cursor, but of another job or another attempt filter: refused too.
    const other = await d.queue.enqueue({ type: 'chatty', args: { lines: ['x', 'y'] } });
    await d.queue.waitFor(other.id, { timeoutMs: 30_000 });
    for (const [path, cursor] of [[`/api/jobs/${other.id}/logs?`, first.nextCursor], [`/api/jobs/${job.id}/logs?attempt=1&`, first.nextCursor]]) {
      const res = await get(`${path}${new URLSearchParams({ cursor })}`);
      expect([path, res.status, asAny(await res.json()).error]).toEqual([path, 400, 'INVALID_CURSOR']);
    }
    for (const bad of ['limit=0', 'limit=201', 'limit=abc', 'attempt=0', 'attempt=-1', 'attempt=1.5', 'attempt=x', 'cursor=a&cursor=b', 'attempt=1&attempt=2', 'level=warn', 'level=ERROR', 'level=error&level=info']) {
      const res = await get(`/api/jobs/${job.id}/logs?${bad}`);
      const body = asAny(await res.json());
      expect([bad, res.status, body.error]).toEqual([bad, 400, 'INVALID_QUERY']);
    }
    for (const id of ['abc', '0', '-1', '1e3', '99999999999999999999']) {
      const res = await get(`/api/jobs/${id}/logs`);
      expect([id, res.status, asAny(await res.json()).error]).toEqual([id, 400, 'INVALID_QUERY']);
    }
    const unknown = await get('/api/jobs/999999999/logs');
    expect([unknown.status, asAny(await unknown.json()).error]).toEqual([404, 'JOB_NOT_FOUND']);
    // The log goes with its job.
    await d.queue.remove(job.id);
    expect((await get(`/api/jobs/${job.id}/logs`)).status).toBe(404);
    const denied = await get(`/api/jobs/${job.id}/logs`, { 'x-test-auth': 'wrong' });
    expect(denied.status).toBe(401);
    expect(await denied.text()).not.toContain('one');
  });

  it('job log: markup and scripts in a message come back as JSON text, bounded', async () => {
    const multiline = 'first line\n  indented second line\n\ttabbed third';
    const long = 'L'.repeat(5_000);
    const job = await d.queue.enqueue({ type: 'chatty', args: { lines: [XSS, multiline, '"quoted" & \\ back\\slash', long, '😀'.repeat(1_500)] } });
    await d.queue.waitFor(job.id, { timeoutMs: 30_000 });
    const res = await get(`/api/jobs/${job.id}/logs`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = asAny(await res.json());
    expect(page.logs.slice(0, 3).map((l: { message: string }) => l.message)).toEqual([XSS, multiline, '"quoted" & \\ back\\slash']);
    // Messages are stored cut to 2,000 characters (UTF-16 units: 1,000 emoji of 1,500).
    expect(page.logs[3].message).toBe('L'.repeat(2_000));
    expect(page.logs[4].message).toBe('😀'.repeat(1_000));

    // 200 lines of 2,000 characters: a page stays under half a megabyte, however much was logged.
    const big = await d.queue.enqueue({ type: 'chatty', args: { lines: Array.from({ length: 300 }, (_, i) => `${i} ${'x'.repeat(3_000)}`) } });
    await d.queue.waitFor(big.id, { timeoutMs: 30_000 });
    const text = await (await get(`/api/jobs/${big.id}/logs`)).text();
    expect(text.length).toBeLessThan(200 * 2_000 + 20_000);
    expect(asAny(JSON.parse(text)).logs).toHaveLength(200);
  });

  it('schedules table: schedules of 1 MB args are cut in the database, not read whole', async () => {
    const blob = '😀'.repeat(512 * 1024); // 1 MB of UTF-16: a cut must not split a surrogate pair
    const names = Array.from({ length: 20 }, (_, i) => `big-sched-${String(i).padStart(2, '0')}`);
    for (const [i, name] of names.entries()) await d.queue.schedule({ name, cron: '0 0 1 1 *', type: 'listed', args: { i, blob }, group: 'big-sched' });
    const run = jest.spyOn(d.app.get(JobQueueDatabase), 'run');
    let page: any;
    let bytes = 0;
    try {
      page = await (await get('/api/schedules?group=big-sched&limit=100')).json().then(asAny);
      for (const result of run.mock.results) for (const row of (await (result.value as Promise<SqlResult>)).rows) bytes += JSON.stringify(row).length;
    } finally {
      run.mockRestore();
      for (const name of names) await d.queue.unschedule(name);
    }
    expect(page.schedules.map((s: { name: string }) => s.name)).toEqual(names);
    // 20 MB of args in the rows; a page shows 160 characters of each (before: all 20 MB were read).
    expect(bytes).toBeLessThan(200_000);
    for (const [i, s] of (page.schedules as any[]).entries()) {
      const full = JSON.stringify({ i, blob });
      const codePoints = full.length - blob.length / 2;
      expect(s.args).toEqual({ text: `${Array.from(full.slice(0, 400)).slice(0, 160).join('')}… [truncated]`, truncated: true, length: codePoints });
      expect(s).toMatchObject({ type: 'listed', group: 'big-sched', cron: '0 0 1 1 *', timeZone: 'UTC', lastRunAt: null, dormant: false });
    }
  });

  it('jobs table: rows of 1 MB args and long errors are cut in the database, not read whole', async () => {
    const later = new Date(Date.now() + 3_600_000);
    const blob = '😀'.repeat(512 * 1024); // 1 MB of UTF-16: a cut must not split a surrogate pair
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await d.queue.enqueue({ type: 'listed', group: 'big-rows', args: { i, blob }, runAfter: later })).id);
    const error = `Error: ${'e'.repeat(60_000)}`; // MySQL's last_error holds 64 KB
    await d.app.get(JobQueueDatabase).run(sql`UPDATE jobs SET last_error = ${error} WHERE id = ${ids[0]}`);
    const run = jest.spyOn(d.app.get(JobQueueDatabase), 'run');
    let page: any;
    let bytes = 0;
    try {
      page = await (await get('/api/jobs?type=listed&group=big-rows&limit=100')).json().then(asAny);
      for (const result of run.mock.results) for (const row of (await (result.value as Promise<SqlResult>)).rows) bytes += JSON.stringify(row).length;
    } finally {
      run.mockRestore();
    }
    expect(page.jobs.map((j: { id: number }) => j.id)).toEqual([...ids].reverse());
    // 20 MB of args and 60 KB of error in the rows; a page shows 160 characters of each.
    expect(bytes).toBeLessThan(200_000);
    for (const [k, j] of (page.jobs as any[]).entries()) {
      const full = JSON.stringify({ i: 19 - k, blob });
      // Code points, counted without splitting 1 MB into an array 40 times (seconds of a blocked event loop under load).
      const codePoints = full.length - blob.length / 2;
      expect(j.args).toEqual({ text: `${Array.from(full.slice(0, 400)).slice(0, 160).join('')}… [truncated]`, truncated: true, length: codePoints });
    }
    expect(page.jobs[19].error).toEqual({ text: `${error.slice(0, 160)}… [truncated]`, truncated: true, length: error.length });
    expect(page.jobs[0].error).toBeNull();
    // The job page counts the same unit (characters, an emoji one) and cuts between two of them;
    // args longer than it shows are cut from their stored (compact) JSON, in the database.
    const detail = await (await get(`/api/jobs/${ids[0]}`)).json().then(asAny);
    const stored = JSON.stringify({ i: 0, blob });
    expect(detail.args.length).toBe(stored.length - blob.length / 2);
    expect(detail.args.text).toMatch(/😀… \[truncated\]$/u);
    // An uncut cell too: '{"e":"😀😀"}' is 10 characters (12 UTF-16 units).
    const small = await d.queue.enqueue({ type: 'listed', group: 'small-emoji', args: { e: '😀😀' }, runAfter: later });
    const cell = (await (await get('/api/jobs?type=listed&group=small-emoji')).json().then(asAny)).jobs[0];
    expect([cell.id, cell.args]).toEqual([small.id, { text: '{"e":"😀😀"}', truncated: false, length: 10 }]);
  });

  it('graph: nodes with parents and edges', async () => {
    const ids = await d.queue.enqueueGraph([
      { ref: 'box', type: 'box' },
      { ref: 'a', type: 'work', parent: 'box' },
      { ref: 'b', type: 'work', parent: 'box', dependsOn: ['a'] },
      { ref: 'c', type: 'work', dependsOn: ['box'] },
      { ref: 'cleanup', type: 'work', dependsOn: [{ job: 'c', allowFailure: true }] },
    ]);
    const g = await (await get(`/api/graph/${ids.b}`)).json().then(asAny);
    expect(g.nodes.map((n: { id: number }) => n.id).sort((x: number, y: number) => x - y)).toEqual([ids.box, ids.a, ids.b, ids.c, ids.cleanup].sort((x, y) => x - y));
    expect(g.nodes.find((n: { id: number }) => n.id === ids.a)).toMatchObject({ parentId: ids.box, type: 'work', ref: 'a' });
    expect(g.nodes.find((n: { id: number }) => n.id === ids.box)).toMatchObject({ isContainer: true });
    expect(g.edges).toEqual(expect.arrayContaining([{ from: ids.a, to: ids.b }, { from: ids.box, to: ids.c }, { from: ids.c, to: ids.cleanup, allowFailure: true }]));
    expect(g.nodes[0]).not.toHaveProperty('args');
    expect((await get('/api/graph/999999999')).status).toBe(404);
  });

  it('graph beside a 3,000-way fan-in: the nearest 1,000 hold the job’s dependent and its 999 edges, and no args are read', async () => {
    // Nothing runs them: no handler for 'listed', and not before an hour.
    const later = new Date(Date.now() + 3_600_000);
    const blob = 'x'.repeat(4_000);
    const ups = Array.from({ length: 3_000 }, (_, i) => ({ ref: `u${i}`, type: 'listed', args: { blob, i }, runAfter: later }));
    const ids = await d.queue.enqueueGraph([...ups, { ref: 'sink', type: 'listed', dependsOn: ups.map((u) => u.ref), runAfter: later }]);
    const run = jest.spyOn(d.app.get(JobQueueDatabase), 'run');
    let g: any;
    let bytes = 0;
    try {
      g = await (await get(`/api/graph/${ids.u0}`)).json().then(asAny);
      for (const result of run.mock.results) for (const row of (await (result.value as Promise<SqlResult>)).rows) bytes += JSON.stringify(row).length;
    } finally {
      run.mockRestore();
    }
    expect(g.truncated).toBe(true);
    expect(g.nodes).toHaveLength(1_000);
    expect(g.nodes.map((n: { id: number }) => n.id)).toContain(ids.sink);
    expect(g.edges).toHaveLength(999);
    expect(g.edges.every((e: { to: number }) => e.to === ids.sink)).toBe(true);
    // The upstreams hold 12 MB of args; the page draws none of it (whole rows: 4 MB for the 1,000 shown alone).
    expect(bytes).toBeLessThan(1_000_000);
  });

  it('graph of an 80 × 80 shuffle: 6,400 edges among 160 jobs, 5,000 sent (the job’s own first) and truncated', async () => {
    const later = new Date(Date.now() + 3_600_000);
    const ups = Array.from({ length: 80 }, (_, i) => ({ ref: `up${i}`, type: 'listed', runAfter: later }));
    const downs = Array.from({ length: 80 }, (_, i) => ({ ref: `down${i}`, type: 'listed', dependsOn: ups.map((u) => u.ref), runAfter: later }));
    const ids = await d.queue.enqueueGraph([...ups, ...downs]);
    const res = await get(`/api/graph/${ids.up0}`);
    const g = await res.json().then(asAny);
    expect(g.nodes).toHaveLength(160);
    expect(g.truncated).toBe(true);
    expect(g.edges).toHaveLength(5_000);
    expect(g.edges.filter((e: { from: number }) => e.from === ids.up0)).toHaveLength(80);
    // 6,400 edges were 150 KB of JSON; a 500 × 500 shuffle's 250,000 were 5.4 MB per refresh.
    expect(Number(res.headers.get('content-length') ?? JSON.stringify(g).length)).toBeLessThan(200_000);
  });

  it('actions need the CSRF header and the same origin; refused ones change nothing', async () => {
    const victim = await d.queue.enqueue({ type: 'work', runAfter: new Date(Date.now() + 3_600_000) });
    const cancel = `/api/jobs/${victim.id}/cancel`;
    const refused = [
      await post(d.url, cancel, {}, AUTH), // no token
      await post(d.url, cancel, {}, { ...AUTH, 'x-job-queue-csrf': 'guess' }),
      await post(d.url, cancel, {}, { ...AUTH, 'x-job-queue-csrf': token, origin: 'https://evil.example' }),
      await post(d.url, cancel, {}, { ...AUTH, 'x-job-queue-csrf': token, 'sec-fetch-site': 'cross-site' }),
      // A form post (text/plain or urlencoded) can't carry the header, and the content type is refused too.
      await fetch(`${d.url}${cancel}`, { method: 'POST', headers: { ...AUTH, 'x-job-queue-csrf': token, 'content-type': 'text/plain' }, body: '{}' }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect((await res.json().then(asAny)).error).toBe('DASHBOARD_CSRF');
    }
    expect((await d.queue.get(victim.id))!.state).toBe('ready');

    const ok = await action(cancel, {}, { origin: d.origin });
    expect(ok.status).toBe(200);
    expect(await ok.json().then(asAny)).toEqual({ id: victim.id, state: 'cancelled' });
    const again = await action(`/api/jobs/${victim.id}/retry`);
    expect(again.status).toBe(200);
    expect((await d.queue.get(victim.id))!.state).not.toBe('cancelled'); // ready again (a worker may already run it)
    const wrong = await action(`/api/jobs/${(await d.queue.enqueue({ type: 'work', runAfter: new Date(Date.now() + 3_600_000) })).id}/retry`);
    expect(wrong.status).toBe(409);
    expect((await wrong.json().then(asAny)).error).toBe('INVALID_JOB_STATE');
    expect((await action('/api/jobs/999999999/cancel')).status).toBe(404);

    // Run now: the same guard; a delayed job becomes due, a finished one is a 409.
    const delayed = await d.queue.enqueue({ type: 'work', runAfter: new Date(Date.now() + 3_600_000) });
    const runNow = `/api/jobs/${delayed.id}/run-now`;
    const forged = await post(d.url, runNow, {}, { ...AUTH, 'x-job-queue-csrf': 'guess' });
    expect(forged.status).toBe(403);
    expect((await d.queue.get(delayed.id))!.runAfter.getTime()).toBeGreaterThan(Date.now() + 3_000_000);
    const ran = await action(runNow);
    expect(ran.status).toBe(200);
    expect(new Date(asAny(await ran.json()).runAfter).getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    expect((await d.queue.waitFor(delayed.id, { timeoutMs: 30_000 })).state).toBe('done'); // the worker runs it now
    const ranDone = await action(runNow);
    expect([ranDone.status, (await ranDone.json().then(asAny)).error]).toEqual([409, 'INVALID_JOB_STATE']);

    // Remove: the same guard; a finished job goes, an open one or one still needed is a 409.
    const removeVictim = `/api/jobs/${victim.id}/remove`;
    await d.queue.waitFor(victim.id, { timeoutMs: 30_000 }); // retried above: the worker runs it
    for (const headers of [AUTH, { ...AUTH, 'x-job-queue-csrf': token, origin: 'https://evil.example' }]) {
      const res = await post(d.url, removeVictim, {}, headers);
      expect(res.status).toBe(403);
      expect((await res.json().then(asAny)).error).toBe('DASHBOARD_CSRF');
    }
    expect(await d.queue.get(victim.id)).not.toBeNull();
    const removed = await action(removeVictim);
    expect([removed.status, await removed.json().then(asAny)]).toEqual([200, { id: victim.id, removed: true }]);
    expect(await d.queue.get(victim.id)).toBeNull();
    expect((await action(removeVictim)).status).toBe(404);
    const open = await action(`/api/jobs/${(await d.queue.enqueue({ type: 'work', runAfter: new Date(Date.now() + 3_600_000) })).id}/remove`);
    expect([open.status, (await open.json().then(asAny)).error]).toEqual([409, 'INVALID_JOB_STATE']);
    // The worker runs up; down, due in an hour, may still read its result.
    const graph = await d.queue.enqueueGraph([{ ref: 'up', type: 'work' }, { ref: 'down', type: 'work', dependsOn: ['up'], runAfter: new Date(Date.now() + 3_600_000) }]);
    expect((await d.queue.waitFor(graph.up, { timeoutMs: 30_000 })).state).toBe('done');
    const needed = await action(`/api/jobs/${graph.up}/remove`);
    expect([needed.status, (await needed.json().then(asAny)).error]).toEqual([409, 'JOB_STILL_NEEDED']);
    expect((await d.queue.get(graph.up))!.state).toBe('done');
  });

  it('reschedule: a waiting job\'s priority and start change; bad bodies are 400s, started and unknown jobs 409/404, forged requests 403; nothing changes then', async () => {
    const ids = await d.queue.enqueueGraph([
      { ref: 'up', type: 'listed' },
      { ref: 'down', type: 'listed', dependsOn: ['up'], runAfter: new Date(Date.now() + 3_600_000) },
    ]);
    const path = `/api/jobs/${ids.down}/reschedule`;
    const snapshot = async () => ((await d.queue.get(ids.down))!);
    const before = await snapshot();
    for (const headers of [AUTH, { ...AUTH, 'x-job-queue-csrf': token, origin: 'https://evil.example' }]) {
      const res = await post(d.url, path, { priority: 9 }, headers);
      expect([res.status, (await res.json().then(asAny)).error]).toEqual([403, 'DASHBOARD_CSRF']);
    }
    const bad: Array<[unknown, string]> = [
      [[], 'INVALID_QUERY'],
      [{ runAfter: 'tomorrow' }, 'INVALID_QUERY'],
      [{ runAfter: '2026-12-24T18:00:00' }, 'INVALID_QUERY'], // no zone: whose 18:00?
      [{ runAfter: 1_766_599_200_000 }, 'INVALID_QUERY'],
      [{}, 'INVALID_JOB'],
      [{ priority: -1 }, 'INVALID_JOB'],
      [{ priority: '9' }, 'INVALID_JOB'],
      [{ priority: null }, 'INVALID_JOB'],
      [{ priority: 9, state: 'ready' }, 'INVALID_JOB'],
    ];
    for (const [body, code] of bad) {
      const res = await action(path, body);
      const answer = asAny(await res.json());
      expect([JSON.stringify(body), res.status, answer.error]).toEqual([JSON.stringify(body), 400, code]);
    }
    expect(await snapshot()).toEqual(before);

    const at = '2027-01-15T09:30:00+01:00';
    const ok = await action(path, { priority: 9, runAfter: at });
    expect([ok.status, asAny(await ok.json())]).toEqual([200, { id: ids.down, state: 'waiting', priority: 9, runAfter: '2027-01-15T08:30:00.000Z' }]);
    expect(await snapshot()).toMatchObject({ priority: 9, runAfter: new Date('2027-01-15T08:30:00Z') });
    await d.queue.cancel(ids.up);
    const gone = await action(path, { priority: 1 }); // cancelled with its upstream
    expect([gone.status, (await gone.json().then(asAny)).error]).toEqual([409, 'INVALID_JOB_STATE']);
    expect((await action('/api/jobs/999999999/reschedule', { priority: 1 })).status).toBe(404);
  });

  it('bulk actions, pause and resume validate input and act', async () => {
    const bulk: number[] = [];
    for (let i = 0; i < 5; i++) bulk.push((await d.queue.enqueue({ type: 'work', group: 'bulk', runAfter: new Date(Date.now() + 3_600_000) })).id);
    expect((await action('/api/jobs/cancel-many', { filter: {} })).status).toBe(400);
    expect((await action('/api/jobs/cancel-many', {})).status).toBe(400);
    expect((await action('/api/jobs/cancel-many', { filter: { state: 'bogus' } })).status).toBe(400);
    // An args filter of {} is a condition only in name: every job's args contain it.
    expect((await action('/api/jobs/cancel-many', { filter: { args: '{}' } })).status).toBe(400);
    expect(await d.queue.find({ group: 'bulk', state: 'ready' }).then((p) => p.jobs.length)).toBe(5);
    const cancelled = await action('/api/jobs/cancel-many', { filter: { group: 'bulk', state: 'ready' } });
    expect(await cancelled.json().then(asAny)).toEqual({ count: 5 });
    const retried = await action('/api/jobs/retry-many', { filter: { group: 'bulk' } });
    expect(await retried.json().then(asAny)).toEqual({ count: 5 });
    await d.queue.cancelMany({ group: 'bulk' });
    expect((await action('/api/jobs/run-now-many', { filter: {} })).status).toBe(400);
    for (let i = 0; i < 3; i++) await d.queue.enqueue({ type: 'work', group: 'bulk-later', runAfter: new Date(Date.now() + 3_600_000) });
    // Reschedule all matching: the fields beside the filter, both checked before anything is written.
    for (const [body, code] of [
      [{ filter: {}, priority: 5 }, 'INVALID_QUERY'],
      [{ filter: { group: 'bulk-later' } }, 'INVALID_JOB'],
      [{ filter: { group: 'bulk-later' }, priority: -5 }, 'INVALID_JOB'],
      [{ filter: { group: 'bulk-later' }, runAfter: 'soon' }, 'INVALID_QUERY'],
      [{ filter: { group: 'bulk-later' }, priority: 5, state: 'ready' }, 'INVALID_JOB'],
      [[{ priority: 5 }], 'INVALID_QUERY'],
    ] as const) {
      const res = await action('/api/jobs/reschedule-many', body);
      expect([JSON.stringify(body), res.status, (await res.json().then(asAny)).error]).toEqual([JSON.stringify(body), 400, code]);
    }
    expect((await d.queue.find({ group: 'bulk-later' })).jobs.map((j) => j.priority)).toEqual([0, 0, 0]);
    const rescheduled = await action('/api/jobs/reschedule-many', { filter: { group: 'bulk-later' }, priority: 5, runAfter: '2027-01-15T08:30:00Z' });
    expect(await rescheduled.json().then(asAny)).toEqual({ count: 3 });
    expect((await d.queue.find({ group: 'bulk-later' })).jobs.map((j) => [j.priority, j.runAfter.toISOString()])).toEqual(Array(3).fill([5, '2027-01-15T08:30:00.000Z']));
    expect(await (await action('/api/jobs/run-now-many', { filter: { group: 'bulk-later' } })).json().then(asAny)).toEqual({ count: 3 });
    expect((await action('/api/jobs/remove-many', { filter: {} })).status).toBe(400);
    const removedMany = await action('/api/jobs/remove-many', { filter: { group: 'bulk' } });
    expect(await removedMany.json().then(asAny)).toEqual({ count: 5 });
    expect(await d.queue.find({ group: 'bulk' }).then((p) => p.jobs.length)).toBe(0);

    expect((await action('/api/pause', {})).status).toBe(400);
    expect((await action('/api/pause', { type: 'a', group: 'b' })).status).toBe(400);
    const paused = await action('/api/pause', { group: 'bulk' });
    expect(await paused.json().then(asAny)).toEqual({ paused: [{ group: 'bulk' }], pausedCount: 1 });
    expect(await d.queue.listPaused()).toEqual([{ group: 'bulk' }]);
    await action('/api/resume', { group: 'bulk' });
    expect(await d.queue.listPaused()).toEqual([]);
  });

  it("schedules: the last slot's job and its state, one schedule by name, those by their last run's state, and a slot's job names its schedule", async () => {
    const byName = async (q: Record<string, string>) => asAny(await (await get(`/api/schedules?${new URLSearchParams(q)}`)).json());
    // Names that share a prefix: the filter is exact.
    await d.queue.schedule({ name: 'last-slot', cron: '* * * * * *', type: 'listed', group: 'last-g' });
    await d.queue.schedule({ name: 'last-slot.other', cron: '0 0 1 1 *', type: 'listed', group: 'last-g' });
    try {
      await eventually('a slot of last-slot enqueued', async () => (await byName({ name: 'last-slot' })).schedules[0]?.lastJob != null, 20_000, 100);
      // No more slots from here on: the last one stays the last.
      await d.queue.schedule({ name: 'last-slot', cron: '0 0 1 1 *', type: 'listed', group: 'last-g' });
      const page = await byName({ name: 'last-slot' });
      expect(page.schedules.map((s: { name: string }) => s.name)).toEqual(['last-slot']);
      const [row] = page.schedules;
      // As the README's check of the last run reads it through the service.
      const { schedules: [view] } = await d.queue.findSchedules({ name: 'last-slot' });
      expect(view.lastRunAt!.toISOString()).toBe(row.lastRunAt);
      const [job] = (await d.queue.find({ key: `recurring:last-slot:${view.lastRunAt!.toISOString()}` })).jobs;
      // 'listed' has no handler here: the slot's job waits, ready.
      expect(row.lastJob).toEqual({ id: job.id, state: 'ready' });
      expect((await byName({ name: 'last-slot.other' })).schedules.map((s: { name: string; lastRunAt: unknown; lastJob: unknown }) => [s.name, s.lastRunAt, s.lastJob])).toEqual([
        ['last-slot.other', null, null],
      ]);
      expect((await byName({ name: 'last-slot', type: 'other-type' })).schedules).toEqual([]);
      expect((await byName({ name: 'no-such-schedule' })).schedules).toEqual([]);
      expect((await byName({ group: 'last-g' })).schedules.map((s: { name: string }) => s.name)).toEqual(['last-slot', 'last-slot.other']);

      // The job's page names its schedule; a job without a slot's key, or with a key that only looks like one, names none.
      expect(asAny(await (await get(`/api/jobs/${job.id}`)).json()).schedule).toBe('last-slot');
      const plain = await d.queue.enqueue({ type: 'listed', args: {} });
      const lookalike = await d.queue.enqueue({ type: 'listed', args: {}, key: 'recurring:last-slot:yesterday' });
      for (const other of [plain, lookalike]) expect(asAny(await (await get(`/api/jobs/${other.id}`)).json()).schedule).toBeNull();

      // Its runs: the jobs table filtered by schedule lists its slot jobs only, newest first, not
      // the lookalike key's job; a bad name is a typed 400.
      const slots = (await d.queue.find({ schedule: 'last-slot' })).jobs.map((j) => j.id);
      expect(slots[0]).toBe(job.id);
      const listed = asAny(await (await get(`/api/jobs?${new URLSearchParams({ schedule: 'last-slot' })}`)).json());
      expect(listed.jobs.map((j: { id: number }) => j.id)).toEqual(slots);
      expect(asAny(await (await get(`/api/jobs?${new URLSearchParams({ schedule: 'last-slot.other' })}`)).json()).jobs).toEqual([]);
      const badRuns = await get(`/api/jobs?${new URLSearchParams({ schedule: 'no spaces' })}`);
      expect([badRuns.status, asAny(await badRuns.json()).error]).toEqual([400, 'INVALID_QUERY']);

      // The state is read at each request: cancelled, then gone (removed: null, shown as such).
      await d.queue.cancel(job.id);
      expect((await byName({ name: 'last-slot' })).schedules[0].lastJob).toEqual({ id: job.id, state: 'cancelled' });
      // The schedules whose last run is in some states (the page's "Last run" filter): a comma list.
      const lastRun = async (states: string) => (await byName({ group: 'last-g', lastRun: states })).schedules.map((s: { name: string }) => s.name);
      expect(await lastRun('failed,cancelled')).toEqual(['last-slot']);
      expect(await lastRun('cancelled')).toEqual(['last-slot']);
      expect(await lastRun('failed')).toEqual([]);
      expect(await lastRun('ready,waiting')).toEqual([]);
      for (const bad of ['broken', ',', 'failed,nope']) {
        const res = await get(`/api/schedules?${new URLSearchParams({ lastRun: bad })}`);
        expect([bad, res.status, asAny(await res.json()).error]).toEqual([bad, 400, 'INVALID_QUERY']);
      }
      await d.queue.remove(job.id);
      expect((await byName({ name: 'last-slot' })).schedules[0]).toMatchObject({ lastRunAt: row.lastRunAt, lastJob: null });

      // A name no schedule can have: 400, typed, nothing read.
      for (const name of ['n'.repeat(300), 'a\u0000b']) {
        const res = await get(`/api/schedules?${new URLSearchParams({ name })}`);
        expect([name.slice(0, 10), res.status, asAny(await res.json()).error]).toEqual([name.slice(0, 10), 400, 'INVALID_QUERY']);
      }
    } finally {
      for (const name of ['last-slot', 'last-slot.other']) await d.queue.unschedule(name);
      await d.app.get(JobQueueDatabase).run(sql`DELETE FROM jobs WHERE type = 'listed'`);
    }
  });

  it("overview: counts the schedules whose last slot's job failed, as findSchedules({ lastRunState: 'failed' }) lists them", async () => {
    await d.queue.schedule({ name: 'ov-boom', cron: '* * * * * *', type: 'boom', args: { message: 'the nightly export broke' }, group: 'ov-g' });
    await d.queue.schedule({ name: 'ov-work', cron: '* * * * * *', type: 'work', args: {}, group: 'ov-g' });
    // A dashboard of its own: the count is a snapshot shared for 15 s, and d's may predate these.
    let fresh: DashboardApp | undefined;
    try {
      const lastStates = async () => {
        const views = (await d.queue.findSchedules({ group: 'ov-g' })).schedules;
        return Promise.all(views.map(async (v) => (v.lastRunAt ? (await d.queue.find({ key: `recurring:${v.name}:${v.lastRunAt.toISOString()}` })).jobs[0]?.state : undefined)));
      };
      await eventually('a slot of each', async () => (await lastStates()).every((st) => st !== undefined), 20_000, 100);
      // No more slots: the last ones stay the last; then they finish, one failed, one done.
      for (const [name, type] of [['ov-boom', 'boom'], ['ov-work', 'work']] as const) {
        await d.queue.schedule({ name, cron: '0 0 1 1 *', type, args: type === 'boom' ? { message: 'the nightly export broke' } : {}, group: 'ov-g' });
      }
      await eventually('both last runs finished', async () => (await lastStates()).join() === 'failed,done', 30_000, 100);
      const failing = (await d.queue.findSchedules({ lastRunState: 'failed' }, { limit: 500 })).schedules.map((s) => s.name);
      expect(failing).toContain('ov-boom');
      expect(failing).not.toContain('ov-work');
      fresh = await startDashboardApp(db, { path: 'fresh', auth: 'public', readOnly: true }, { queue: { worker: false } });
      const o = asAny(await (await fetch(`${fresh.url}/api/overview`)).json());
      expect(o.failingSchedules).toBe(failing.length);
    } finally {
      await fresh?.close();
      for (const name of ['ov-boom', 'ov-work']) await d.queue.unschedule(name);
    }
  });

  it('schedules: Run now enqueues one slot job; Remove takes schedule() and dormant ones, refuses declared ones, forged requests and bad names', async () => {
    const jq = d.app.get(JobQueueDatabase);
    const until = (ms: number) => jq.dialect.timeParam(new Date(Date.now() + ms));
    const names = ['act-runtime', 'act-declared', 'act-dormant'];
    for (const name of names) await d.queue.schedule({ name, cron: '0 0 1 1 *', type: 'listed', args: { name }, group: 'act-g' });
    // As a running process's @Recurring, and as one no process declares any more.
    await jq.run(sql`UPDATE job_queue_schedules SET declared_until = ${until(600_000)} WHERE name = 'act-declared'`);
    await jq.run(sql`UPDATE job_queue_schedules SET declared_until = ${until(-60_000)} WHERE name = 'act-dormant'`);
    const left = async () => (await d.queue.listSchedules()).map((s) => s.name).filter((n) => n.startsWith('act-')).sort();
    const runs = async (name: string) => (await d.queue.find({ type: 'listed', argsContains: { name, manual: true } })).jobs;
    try {
      const listed = asAny(await (await get(`/api/schedules?${new URLSearchParams({ group: 'act-g' })}`)).json());
      expect(listed.schedules.map((s: { name: string; declared: boolean; dormant: boolean }) => [s.name, s.declared, s.dormant])).toEqual([
        ['act-declared', true, false],
        ['act-dormant', false, true],
        ['act-runtime', false, false],
      ]);
      for (const path of ['/api/schedules/act-runtime/run-now', '/api/schedules/act-runtime/remove']) {
        for (const headers of [AUTH, { ...AUTH, 'x-job-queue-csrf': 'guess' }, { ...AUTH, 'x-job-queue-csrf': token, origin: 'https://evil.example' }]) {
          const res = await post(d.url, path, {}, headers);
          expect([path, res.status, (await res.json().then(asAny)).error]).toEqual([path, 403, 'DASHBOARD_CSRF']);
        }
      }
      expect(await runs('act-runtime')).toEqual([]);
      expect(await left()).toEqual(['act-declared', 'act-dormant', 'act-runtime']);

      const before = (await d.queue.listSchedules()).find((s) => s.name === 'act-runtime')!;
      const ran = await action('/api/schedules/act-runtime/run-now');
      const body = asAny(await ran.json());
      expect([ran.status, body]).toEqual([200, { id: expect.any(Number), type: 'listed', state: 'ready' }]);
      const [job] = await runs('act-runtime');
      expect(job).toMatchObject({ id: body.id, group: 'act-g', args: { name: 'act-runtime', slot: expect.any(String), manual: true } });
      expect((await d.queue.listSchedules()).find((s) => s.name === 'act-runtime')!.nextRunAt).toEqual(before.nextRunAt);
      // A declared @Recurring runs now as well; only its removal is the code's to decide.
      expect((await action('/api/schedules/act-declared/run-now')).status).toBe(200);
      expect(await runs('act-declared')).toHaveLength(1);

      const declared = await action('/api/schedules/act-declared/remove');
      const refusal = asAny(await declared.json());
      expect([declared.status, refusal.error]).toEqual([409, 'SCHEDULE_DECLARED']);
      expect(refusal.message).toContain('@Recurring');
      for (const name of ['act-runtime', 'act-dormant']) {
        const res = await action(`/api/schedules/${name}/remove`);
        expect([res.status, await res.json().then(asAny)]).toEqual([200, { name, removed: true }]);
      }
      expect(await left()).toEqual(['act-declared']);
      // Jobs a removed schedule enqueued stay.
      expect(await runs('act-runtime')).toHaveLength(1);

      // Names no schedule has: gone, unknown, markup, a NUL, 5,000 characters. A 404 each, as JSON, bounded; nothing enqueued.
      const jobs = (await d.queue.find({ type: 'listed' }, { limit: 500 })).jobs.length;
      for (const name of ['act-runtime', 'no-such', XSS, 'act\u0000declared', 'n'.repeat(5_000)]) {
        for (const verb of ['run-now', 'remove']) {
          const res = await action(`/api/schedules/${encodeURIComponent(name)}/${verb}`);
          expect(res.headers.get('content-type')).toMatch(/application\/json/);
          const text = await res.text();
          expect([name.slice(0, 20), verb, res.status, asAny(JSON.parse(text)).error]).toEqual([name.slice(0, 20), verb, 404, 'SCHEDULE_NOT_FOUND']);
          expect(text.length).toBeLessThan(1_000);
        }
      }
      expect((await d.queue.find({ type: 'listed' }, { limit: 500 })).jobs.length).toBe(jobs);
      expect(await left()).toEqual(['act-declared']);
    } finally {
      for (const name of names) await d.queue.unschedule(name);
      await jq.run(sql`DELETE FROM jobs WHERE type = 'listed'`);
    }
  });

  it('shows thousands of paused groups bounded: the overview and each pause answer send the first 200 and the count', async () => {
    const db = d.app.get(JobQueueDatabase);
    const names = Array.from({ length: 5_000 }, (_, i) => `tenant-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 500) {
      const rows = names.slice(i, i + 500).map((n) => sql`('group', ${n}, ${db.dialect.now()})`);
      await db.run(sql`INSERT INTO job_queue_paused (kind, name, paused_at) VALUES ${sql.join(rows)}`);
    }
    try {
      const overview = await get('/api/overview');
      const text = await overview.text();
      const o = asAny(JSON.parse(text));
      expect([o.paused.length, o.pausedCount]).toEqual([200, 5_000]);
      expect(o.paused[0]).toEqual({ group: 'tenant-0000' });
      expect(text.length).toBeLessThan(30_000);
      const answer = await action('/api/pause', { type: 'one-more' });
      const body = asAny(await answer.json());
      expect([body.paused.length, body.pausedCount]).toEqual([200, 5_001]);
      await action('/api/resume', { type: 'one-more' });
    } finally {
      await db.run(sql`DELETE FROM job_queue_paused WHERE kind = 'group' AND name LIKE 'tenant-%'`);
    }
  });

  it('readOnly refuses every action on the server, even with a valid token', async () => {
    const roToken = await csrfToken(ro.url);
    const html = await (await fetch(ro.url)).text();
    expect(html).toContain('<meta name="jq-read-only" content="true">');
    const job = await ro.queue.enqueue({ type: 'work', runAfter: new Date(Date.now() + 3_600_000) });
    await ro.queue.schedule({ name: 'ro-yearly', cron: '0 0 1 1 *', type: 'work' });
    const paths = [`/api/jobs/${job.id}/cancel`, `/api/jobs/${job.id}/retry`, `/api/jobs/${job.id}/remove`, `/api/jobs/${job.id}/run-now`, '/api/jobs/cancel-many', '/api/jobs/retry-many', '/api/jobs/remove-many', '/api/jobs/run-now-many', '/api/pause', '/api/resume', '/api/schedules/ro-yearly/run-now', '/api/schedules/ro-yearly/remove', `/api/jobs/${job.id}/reschedule`, '/api/jobs/reschedule-many'];
    for (const path of paths) {
      const res = await post(ro.url, path, { filter: { type: 'work' }, type: 'work' }, { 'x-job-queue-csrf': roToken });
      expect([path, res.status]).toEqual([path, 403]);
      expect((await res.json().then(asAny)).error).toBe('DASHBOARD_READ_ONLY');
    }
    expect((await ro.queue.get(job.id))!.state).toBe('ready');
    expect(await ro.queue.listPaused()).toEqual([]);
    expect((await ro.queue.listSchedules()).filter((s) => s.name === 'ro-yearly')).toHaveLength(1);
    expect(await ro.queue.unschedule('ro-yearly')).toBe(true);
    expect(await ro.queue.find({ type: 'work', argsContains: { manual: true } }).then((p) => p.jobs)).toEqual([]);
    expect((await fetch(`${ro.url}/api/overview`)).status).toBe(200);
    // Reading a job's log is no action: a read-only dashboard serves it.
    expect(asAny(await (await fetch(`${ro.url}/api/jobs/${job.id}/logs`)).json())).toEqual({ logs: [], nextCursor: null });
  });
});

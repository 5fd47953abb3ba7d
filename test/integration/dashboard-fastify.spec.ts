import { FastifyAdapter } from '@nestjs/platform-fastify';
import { describeDialects } from '../support/describe-dialects';
import { buildDashboardUi, csrfToken, startDashboardApp, type DashboardApp } from '../support/dashboard-app';

const asAny = (v: unknown): any => v;
const AUTH = { 'x-test-auth': 'letmein' };

/** A response's status, its body read: an unread body keeps fetch's socket open after the server closes, and the Jest worker with it. */
async function statusOf(response: Promise<Response>): Promise<number> {
  const r = await response;
  await r.arrayBuffer();
  return r.status;
}

/** The same module on Fastify: routes under the global prefix, auth, CSRF, typed errors, read-only. */
describeDialects(
  'dashboard on Fastify',
  (db) => {
    let d: DashboardApp;
    let ro: DashboardApp;
    let token: string;
    const post = (base: string, path: string, body: unknown, headers: Record<string, string>) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

    beforeAll(async () => {
      buildDashboardUi();
      const auth = (req: { headers: Record<string, string> }) => req.headers['x-test-auth'] === 'letmein';
      d = await startDashboardApp(db, { path: '/queue', auth }, { globalPrefix: 'admin', adapter: new FastifyAdapter() });
      ro = await startDashboardApp(db, { path: '/queue', auth: 'public', readOnly: true }, { adapter: new FastifyAdapter(), queue: { concurrency: 1 } });
      token = await csrfToken(d.url, AUTH);
    });
    afterAll(async () => {
      await d?.close();
      await ro?.close();
    });

    it('serves the page, assets and API under the prefix with the security headers, and 401 without auth', async () => {
      const page = await fetch(d.url, { headers: AUTH });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await page.text()).toContain('src="/admin/queue/assets/app.js"');
      const js = await fetch(`${d.url}/assets/app.js`, { headers: AUTH });
      expect(js.headers.get('content-type')).toMatch(/javascript/);
      expect((await js.text()).length).toBeGreaterThan(0);
      for (const path of ['', '/assets/app.js', '/api/overview', '/api/jobs']) expect(await statusOf(fetch(`${d.url}${path}`))).toBe(401);
      const job = await d.queue.enqueue({ type: 'work', args: { x: '<img src=x onerror=alert(1)>' } });
      const view = await (await fetch(`${d.url}/api/jobs/${job.id}`, { headers: AUTH })).json().then(asAny);
      expect(JSON.parse(view.args.text)).toEqual({ x: '<img src=x onerror=alert(1)>' });
      const bad = await fetch(`${d.url}/api/jobs?state=nope`, { headers: AUTH });
      expect(bad.status).toBe(400);
      expect((await bad.json().then(asAny)).error).toBe('INVALID_QUERY');
      expect((await (await fetch(`${d.url}/api/overview`, { headers: AUTH })).json().then(asAny)).counts).toBeDefined();
      // The job log's route: the same auth, its query string as Fastify parses it (a repeated field is an array).
      expect(await statusOf(fetch(`${d.url}/api/jobs/${job.id}/logs`))).toBe(401);
      expect(await (await fetch(`${d.url}/api/jobs/${job.id}/logs`, { headers: AUTH })).json().then(asAny)).toEqual({ logs: [], nextCursor: null });
      for (const q of ['cursor=a&cursor=b', 'attempt=0', 'limit=201']) {
        const res = await fetch(`${d.url}/api/jobs/${job.id}/logs?${q}`, { headers: AUTH });
        expect([q, res.status, (await res.json().then(asAny)).error]).toEqual([q, 400, 'INVALID_QUERY']);
      }
      expect(await statusOf(fetch(`${d.url}/api/jobs/999999999/logs`, { headers: AUTH }))).toBe(404);
    });

    it('refuses actions without the CSRF header or from another origin, performs them with it; read-only refuses', async () => {
      const job = await d.queue.enqueue({ type: 'work', runAfter: new Date(Date.now() + 3_600_000) });
      const cancel = `/api/jobs/${job.id}/cancel`;
      expect(await statusOf(post(d.url, cancel, {}, AUTH))).toBe(403);
      expect(await statusOf(post(d.url, cancel, {}, { ...AUTH, 'x-job-queue-csrf': token, origin: 'https://evil.example' }))).toBe(403);
      expect((await d.queue.get(job.id))!.state).toBe('ready');
      const ok = await post(d.url, cancel, {}, { ...AUTH, 'x-job-queue-csrf': token });
      expect(await ok.json().then(asAny)).toEqual({ id: job.id, state: 'cancelled' });
      // A schedule's name is a path parameter: Fastify decodes it as Express does.
      await d.queue.schedule({ name: 'fastify.yearly:1', cron: '0 0 1 1 *', type: 'work', args: { via: 'fastify' } });
      try {
        const ran = await post(d.url, `/api/schedules/${encodeURIComponent('fastify.yearly:1')}/run-now`, {}, { ...AUTH, 'x-job-queue-csrf': token });
        const body = asAny(await ran.json());
        expect([ran.status, body.type]).toEqual([200, 'work']);
        expect((await d.queue.get(body.id))!.args).toMatchObject({ via: 'fastify', manual: true });
        expect((await d.queue.waitFor(body.id, { timeoutMs: 30_000 })).state).toBe('done');
        expect(await statusOf(post(d.url, `/api/schedules/${encodeURIComponent('no such\u0000')}/run-now`, {}, { ...AUTH, 'x-job-queue-csrf': token }))).toBe(404);
      } finally {
        await d.queue.unschedule('fastify.yearly:1');
      }
      const roToken = await csrfToken(ro.url);
      const refused = await post(ro.url, '/api/pause', { type: 'work' }, { 'x-job-queue-csrf': roToken });
      expect(refused.status).toBe(403);
      expect((await refused.json().then(asAny)).error).toBe('DASHBOARD_READ_ONLY');
    });
  },
  ['sqlite', 'postgres'],
);

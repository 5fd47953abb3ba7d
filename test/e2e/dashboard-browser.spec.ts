import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { JobHandler, JobQueueService, type JobContext } from '../../lib';
import { AppModule } from '../../sample-app/app.module';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { sql } from '../../lib/database/sql';
import { buildDashboardUi } from '../support/dashboard-app';
import { describeDialects } from '../support/describe-dialects';
import { eventually } from '../support/wait';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'browser-spec-token';
const XSS_TYPE = '<img src=x onerror="window.__xss=1">';
const XSS_GROUP = '</script><script>window.__xss=2</script>';
const XSS_ERROR = '<img src=x onerror="window.__xss=3"></script><script>window.__xss=4</script>';
const SHOTS = join(process.cwd(), '.test-tmp', 'dashboard-screenshots');

/** Gate of the graph's first node: the test opens it once it has seen the node running. */
let openGate: () => void = () => undefined;
let gate = new Promise<void>((r) => (openGate = r));
const sleepySnoozed = new Set<string>();
const flakyFailed = new Set<number>();
/** Runs of each `relogger` job so far: runs 1-3 fail (two attempts, then the first of a retry), run 4 succeeds. */
const reloggerRuns = new Map<number, number>();
/** Gate of a `logger` job: it logs `lines`, waits here, then logs `after`. */
let openLogGate: () => void = () => undefined;
let logGate = new Promise<void>((r) => (openLogGate = r));
/** A `held` job runs until the test lets it go. */
let releaseHeld: () => void = () => undefined;
let heldGate = Promise.resolve();

@Injectable()
class BrowserSpecHandlers {
  @JobHandler('step')
  async step(args: { gate?: boolean; ms?: number } | null, ctx: JobContext) {
    if (args?.gate) {
      await ctx.progress(30, 'waiting for the test');
      await gate;
    }
    if (args?.ms) await new Promise((r) => setTimeout(r, args.ms));
    return { ok: true };
  }

  @JobHandler('flaky', { maxAttempts: 1 })
  async flaky(_args: unknown, ctx: JobContext) {
    if (!flakyFailed.has(ctx.id)) {
      flakyFailed.add(ctx.id);
      throw new Error('flaky: first run fails on purpose');
    }
    return { recovered: true };
  }

  /** Snoozes for an hour on its first run (a source still preparing its data), then returns. */
  @JobHandler('sleepy', { maxAttempts: 1 })
  async sleepy(args: { token: string }, ctx: JobContext) {
    // By a token of the test's, not the id: each dialect's database numbers its jobs from 1.
    if (!sleepySnoozed.has(args.token)) {
      sleepySnoozed.add(args.token);
      ctx.snooze(3_600_000);
    }
    return { awake: true };
  }

  @JobHandler('held', { maxAttempts: 1 })
  async held() {
    await heldGate;
  }

  @JobHandler('logger', { maxAttempts: 1 })
  async logger(args: { lines: string[]; gate?: boolean; after?: string[] }, ctx: JobContext) {
    for (const line of args.lines) ctx.log(line);
    if (args.gate) await logGate;
    for (const line of args.after ?? []) ctx.log(line);
    return { logged: args.lines.length + (args.after?.length ?? 0) };
  }

  @JobHandler('relogger', { maxAttempts: 2 })
  async relogger(_args: unknown, ctx: JobContext) {
    const run = (reloggerRuns.get(ctx.id) ?? 0) + 1;
    reloggerRuns.set(ctx.id, run);
    ctx.log(`run ${run}`);
    if (run < 4) throw new Error(`run ${run} fails on purpose`);
    return { runs: run };
  }

  @JobHandler(XSS_TYPE, { maxAttempts: 1 })
  async xss() {
    throw new Error(XSS_ERROR);
  }
}

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI !== 'true') {
  const line = `!!! ${CHROMIUM} is missing: the dashboard browser spec is SKIPPED (apt-get install -y chromium).`;
  process.stderr.write(`\n${'!'.repeat(line.length)}\n${line}\n${'!'.repeat(line.length)}\n`);
}

/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core), on the sample app
 * as `npm start` mounts it (/dashboard, HTTP Basic with DASHBOARD_TOKEN), on SQLite and
 * PostgreSQL: overview, args filter and paging, a 100-node pipeline's graph updating live,
 * retry from the job page, XSS rows rendered as text, a 1,000-job graph laid out in a worker,
 * pausing and resuming, a schedule's Run now and Remove, a phone's narrow screen, both themes' contrast, and a denied auth
 * getting nothing.
 */
describe('dashboard in a browser: chromium present', () => {
  it(`finds ${CHROMIUM} (under CI=true a missing browser fails the run)`, () => {
    if (process.env.CI === 'true') expect(haveChromium).toBe(true);
  });
});

(haveChromium ? describeDialects : skipDialects)(
  'dashboard in a browser',
  (db) => {
    let app: INestApplication;
    let queue: JobQueueService;
    let base: string;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const shots = join(SHOTS, db.dialect);
    const problems: string[] = [];
    /** The start of the one confirm() the next action expects: accepted once; any other dialog is a problem. */
    let acceptDialog: string | null = null;

    beforeAll(async () => {
      buildDashboardUi();
      mkdirSync(shots, { recursive: true });
      gate = new Promise<void>((r) => (openGate = r));
      logGate = new Promise<void>((r) => (openLogGate = r));
      flakyFailed.clear(); // ids start over in each dialect's database
      reloggerRuns.clear();
      app = await bootSampleApp(db.dialect === 'sqlite' ? `sqlite:${db.location}` : db.location);
      queue = app.get(JobQueueService);
      const { port } = app.getHttpServer().address() as AddressInfo;
      base = `http://127.0.0.1:${port}`;
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      });
      context = await browser.newContext({ viewport: { width: 1280, height: 860 }, httpCredentials: { username: 'ops', password: TOKEN } });
      // Records any CSP violation: an injected inline handler or script would show up here.
      await context.addInitScript(
        `window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`,
      );
      page = await context.newPage();
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
      page.on('dialog', (d) => {
        if (acceptDialog !== null && d.message().startsWith(acceptDialog)) {
          acceptDialog = null;
          void d.accept();
          return;
        }
        problems.push(`dialog: ${d.message()}`);
        void d.dismiss();
      });
    }, 120_000);

    afterAll(async () => {
      openGate();
      openLogGate();
      await browser?.close();
      await app?.close();
    });

    afterEach(() => {
      expect(problems).toEqual([]);
    });

    it('shows the overview with real counts', async () => {
      const http = (path: string, body: unknown) =>
        fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const acme = (await (await http('/pipelines', { tenant: 'acme' })).json()) as { reportId: number };
      await (await http('/pipelines', { tenant: 'globex', sources: ['crm', 'web'] })).json();
      await queue.waitFor(acme.reportId, { timeoutMs: 30_000 });
      await page.goto(`${base}/dashboard`);
      const done = page.locator('.count-card[data-state=done] .count-n');
      await eventually('done count on the overview', async () => Number((await done.textContent()) ?? 0) >= 11, 20_000, 200);
      await page.locator('.chart').waitFor();
      await page.screenshot({ path: join(shots, 'overview.png') });
    });

    it('filters jobs by args and pages through them', async () => {
      // Run alone (-t), the overview test's pipelines are not there: acme's is started here.
      if (!(await queue.find({ type: 'report', argsContains: { tenant: 'acme' } }, { limit: 1 })).jobs.length) {
        const res = await fetch(`${base}/pipelines`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tenant: 'acme' }) });
        await queue.waitFor(((await res.json()) as { reportId: number }).reportId, { timeoutMs: 30_000 });
      }
      for (let i = 0; i < 60; i++) await queue.enqueue({ type: 'step', args: { batch: 'paging', i }, group: 'paging' });
      await page.goto(`${base}/dashboard#/jobs`);
      await page.locator('#jobs-table').waitFor();
      await page.fill('#f-args', '{"tenant":"acme"}');
      await page.click('#jobs-filter button[type=submit]');
      await page.waitForFunction(`location.hash.includes('args=')`);
      await page.locator('#jobs-table').waitFor();
      await eventually('acme rows only', async () => {
        const cells = await page.locator('#jobs-table td.cell-args').allTextContents();
        // report, 3 fetches, aggregate, render, notify carry the tenant (parse steps carry only the source).
        return cells.length === 7 && cells.every((c) => c.includes('"tenant":"acme"'));
      }, 10_000, 100);
      await page.screenshot({ path: join(shots, 'jobs-filtered.png') });

      await page.goto(`${base}/dashboard#/jobs?${new URLSearchParams({ args: '{"batch":"paging"}' })}`);
      await page.locator('#jobs-table').waitFor();
      const first = await page.locator('#jobs-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
      expect(first).toHaveLength(50);
      await page.click('#next-page');
      await eventually('second page', async () => (await page.locator('#jobs-table tbody tr').count()) === 10, 10_000, 100);
      const second = await page.locator('#jobs-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
      expect(new Set([...first, ...second]).size).toBe(60);
      await page.click('#prev-page');
      await eventually('back to the first page', async () => (await page.locator('#jobs-table tbody tr').count()) === 50, 10_000, 100);
      await page.locator('#jobs-table tbody tr a').first().click();
      await page.locator('#job-args').waitFor();
      expect(await page.locator('#job-args pre').textContent()).toContain('"batch": "paging"');
    });

    it('draws a 100-node pipeline and updates it live while it runs', async () => {
      const W = 11;
      const L = 9;
      const nodes: Array<{ ref: string; type: string; args?: object; parent?: string; dependsOn?: Array<string | { job: string; allowFailure: true }> }> = [
        { ref: 'pipeline', type: 'pipeline' },
        { ref: 'gate', type: 'step', args: { gate: true }, parent: 'pipeline' },
      ];
      for (let k = 0; k < L; k++) {
        for (let i = 0; i < W; i++) nodes.push({ ref: `s${k}-${i}`, type: 'step', args: { ms: 10 }, parent: 'pipeline', dependsOn: [k ? `s${k - 1}-${i}` : 'gate'] });
      }
      nodes.push({ ref: 'join', type: 'step', parent: 'pipeline', dependsOn: Array.from({ length: W }, (_, i) => `s${L - 1}-${i}`) });
      // Outside the container, after it however it ends: its edge is drawn dashed.
      nodes.push({ ref: 'report', type: 'step', dependsOn: [{ job: 'pipeline', allowFailure: true }] });
      const ids = await queue.enqueueGraph(nodes as never);
      await eventually('gate running at 30%', async () => {
        const gateJob = await queue.get(ids.gate);
        return gateJob?.state === 'running' && gateJob.progress === 30;
      }, 20_000, 50);

      await page.goto(`${base}/dashboard#/graph/${ids.gate}`);
      const gateNode = page.locator(`#dag g.node[data-id="${ids.gate}"]`);
      await gateNode.waitFor();
      expect(await page.locator('#dag g.node').count()).toBe(nodes.length);
      expect(await page.locator('#dag g.node.container').count()).toBe(1);
      expect(await page.locator('#dag path.edge').count()).toBe(W + W * (L - 1) + W + 1); // gate → first layer, the chains, last layer → join, pipeline → report
      expect(await page.locator('#dag path.edge.allow-failure').count()).toBe(1);
      expect(await page.locator('#graph-info').textContent()).toContain('1 dashed');
      expect(await gateNode.getAttribute('data-state')).toBe('running');
      expect(await gateNode.textContent()).toContain('30%');
      await page.screenshot({ path: join(shots, 'graph-running.png') });
      await page.evaluate('window.__sameDocument = true');

      openGate();
      await eventually('gate node shown done', async () => (await gateNode.getAttribute('data-state')) === 'done', 20_000, 100);
      const joinNode = page.locator(`#dag g.node[data-id="${ids.join}"]`);
      await eventually('join node shown done', async () => (await joinNode.getAttribute('data-state')) === 'done', 60_000, 200);
      expect(await page.evaluate('window.__sameDocument')).toBe(true); // no reload
      await page.screenshot({ path: join(shots, 'graph-done.png') });

      await joinNode.click();
      await page.waitForFunction(`location.hash === '#/job/${ids.join}'`);
      await page.locator('#job-type').waitFor();
      expect(await page.locator('#job-type').textContent()).toBe('step');
    });

    it('draws a failed graph: the cancelled dependent, and the cleanup that ran anyway on a dashed edge', async () => {
      const ids = await queue.enqueueGraph([
        { ref: 'fetch', type: 'flaky' },
        { ref: 'render', type: 'step', dependsOn: ['fetch'] },
        { ref: 'cleanup', type: 'step', dependsOn: [{ job: 'render', allowFailure: true }] },
      ]);
      expect(await queue.waitFor(ids.cleanup, { timeoutMs: 20_000 })).toMatchObject({ state: 'done' });
      await page.goto(`${base}/dashboard#/graph/${ids.fetch}`);
      await page.locator(`#dag g.node[data-id="${ids.cleanup}"]`).waitFor();
      expect(await page.locator(`#dag g.node[data-id="${ids.fetch}"]`).getAttribute('data-state')).toBe('failed');
      expect(await page.locator(`#dag g.node[data-id="${ids.render}"]`).getAttribute('data-state')).toBe('cancelled');
      expect(await page.locator(`#dag g.node[data-id="${ids.cleanup}"]`).getAttribute('data-state')).toBe('done');
      expect(await page.locator('#dag path.edge').count()).toBe(2);
      expect(await page.locator('#dag path.edge.allow-failure').count()).toBe(1);
      await page.screenshot({ path: join(shots, 'graph-allow-failure.png') });
    });

    it('retries a failed job from its page and sees it finish', async () => {
      const job = await queue.enqueue({ type: 'flaky' });
      expect((await queue.waitFor(job.id, { timeoutMs: 20_000 })).state).toBe('failed');
      await page.goto(`${base}/dashboard#/job/${job.id}`);
      await page.locator('#job-error').waitFor();
      expect(await page.locator('#job-error pre').textContent()).toContain('flaky: first run fails on purpose');
      expect(await page.locator('#job-error h2').textContent()).toBe('Error');
      await page.screenshot({ path: join(shots, 'job-failed.png') });
      await page.click('#retry-job');
      await eventually('job page shows done', async () => (await page.locator('.job-head .badge').textContent()) === 'done', 20_000, 100);
      expect((await queue.get(job.id))!.state).toBe('done');
      expect(await page.locator('#job-result pre').textContent()).toContain('"recovered": true');

      // A job due in an hour: Run now starts it.
      const delayed = await queue.enqueue({ type: 'step', runAfter: new Date(Date.now() + 3_600_000) });
      await page.goto(`${base}/dashboard#/job/${delayed.id}`);
      await page.click('#run-now-job');
      await eventually('job page shows done', async () => (await page.locator('.job-head .badge').textContent()) === 'done', 20_000, 100);
      expect(await page.locator('#run-now-job').count()).toBe(0);

      // A job that snoozed for an hour: its page says so, its attempt was given back; Run now wakes it.
      const sleepy = await queue.enqueue({ type: 'sleepy', args: { token: `${Date.now()}-${Math.random()}` } });
      await eventually('snoozed', async () => (await queue.get(sleepy.id))!.snoozes === 1, 20_000, 50);
      await page.goto(`${base}/dashboard#/job/${sleepy.id}`);
      await page.locator('#run-now-job').waitFor();
      const facts = await page.locator('dl.facts').first().innerText();
      expect(facts).toMatch(/attempts\s+0 of 1/);
      expect(facts).toMatch(/snoozed\s+once/);
      await page.screenshot({ path: join(shots, 'job-snoozed.png') });
      await page.click('#run-now-job');
      await eventually('job page shows done', async () => (await page.locator('.job-head .badge').textContent()) === 'done', 20_000, 100);
      expect(await queue.get(sleepy.id)).toMatchObject({ state: 'done', attempts: 1, snoozes: 1 });

      const later = await queue.enqueue({ type: 'step', runAfter: new Date(Date.now() + 3_600_000) });
      await page.goto(`${base}/dashboard#/job/${later.id}`);
      await page.click('#cancel-job');
      await eventually('job page shows cancelled', async () => (await page.locator('.job-head .badge').textContent()) === 'cancelled', 20_000, 100);

      // Remove asks first; accepted, the job is gone and the page goes back to the list.
      acceptDialog = `Remove job #${later.id} for good`;
      await page.click('#remove-job');
      await eventually('back on the job list', async () => new URL(page.url()).hash === '#/jobs', 20_000, 100);
      expect(acceptDialog).toBeNull();
      expect(await queue.get(later.id)).toBeNull();
    });

    it("reschedules a job that has not started from its page: what is typed survives refreshes, only changed fields are sent, and a start in the past runs it", async () => {
      const job = await queue.enqueue({ type: 'step', group: 'browser-resched', runAfter: new Date(Date.now() + 3_600_000) });
      await page.goto(`${base}/dashboard#/job/${job.id}`);
      await page.locator('#reschedule-card').waitFor();
      expect(await page.inputValue('#reschedule-priority')).toBe('0');
      await page.fill('#reschedule-priority', '9');
      await page.waitForTimeout(2_500); // a refresh or more
      expect(await page.inputValue('#reschedule-priority')).toBe('9');
      await page.click('#reschedule-submit');
      await eventually('priority 9 stored', async () => (await queue.get(job.id))!.priority === 9, 10_000, 50);
      expect((await queue.get(job.id))!.runAfter).toEqual(job.runAfter); // the start was not touched, so not sent
      await eventually('the page shows it', async () => (await page.locator('.facts dt:text-is("priority") + dd').textContent()) === '9', 10_000, 50);
      await page.click('#reschedule-submit');
      expect(await page.textContent('#reschedule-error')).toBe('Nothing changed.');
      // The browser refuses a negative priority before anything is sent.
      await page.fill('#reschedule-priority', '-5');
      await page.click('#reschedule-submit');
      expect(await page.locator('#reschedule-priority:invalid').count()).toBe(1);
      await page.waitForTimeout(500);
      expect((await queue.get(job.id))!.priority).toBe(9);

      // An hour ago, in the browser's own time zone, as its date picker takes it.
      const anHourAgo = await page.evaluate(`(() => { const d = new Date(Date.now() - 3600000); const p = (n) => String(n).padStart(2, '0');
        return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()); })()`);
      await page.fill('#reschedule-priority', '9');
      await page.fill('#reschedule-run-after', String(anHourAgo));
      await page.click('#reschedule-submit');
      const done = await queue.waitFor(job.id, { timeoutMs: 30_000 });
      expect(done.state).toBe('done');
      expect(Math.abs(done.runAfter.getTime() - (Date.now() - 3_600_000))).toBeLessThan(60_000);
      await eventually('the card gone once it ran', async () => page.locator('#reschedule-card').isHidden(), 10_000, 50);
    });

    it('reschedules every matching job from the jobs list, then runs them now, and says how many each time', async () => {
      const group = 'browser-bulk';
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await queue.enqueue({ type: 'step', group, runAfter: new Date(Date.now() + 3_600_000) })).id);
      await page.goto(`${base}/dashboard#/jobs?${new URLSearchParams({ group })}`);
      await page.locator('#jobs-table').waitFor();
      await page.click('#reschedule-many');
      expect(await page.textContent('#bulk-result')).toBe('Give a priority, a start, or both.');
      await page.fill('#bulk-priority', '6');
      acceptDialog = 'Reschedule every job matching this filter that has not started (waiting or ready): priority 6?';
      await page.click('#reschedule-many');
      // The count stays on the page: the table is read again in place, the page not rebuilt.
      await eventually('the count shown', async () => (await page.textContent('#bulk-result')) === 'Rescheduled: 3 jobs.', 10_000, 50);
      expect(acceptDialog).toBeNull();
      expect(await page.inputValue('#bulk-priority')).toBe('6');
      for (const id of ids) expect((await queue.get(id))!.priority).toBe(6);
      acceptDialog = 'Run every delayed job matching this filter now';
      await page.click('#run-now-many');
      await eventually('the count shown', async () => (await page.textContent('#bulk-result')) === 'Brought forward: 3 jobs.', 10_000, 50);
      for (const id of ids) expect((await queue.waitFor(id, { timeoutMs: 30_000 })).state).toBe('done');
    });

    it('lays out a 1,000-job fan-out in a worker, the edges from one job sharing a trunk, and says so when the worker fails', async () => {
      const nodes: Array<{ ref: string; type: string; runAfter?: Date; dependsOn?: string[] }> = [{ ref: 'root', type: 'step', runAfter: new Date(Date.now() + 86_400_000) }];
      for (let i = 0; i < 998; i++) nodes.push({ ref: `m${i}`, type: 'step', dependsOn: ['root'] });
      nodes.push({ ref: 'sink', type: 'step', dependsOn: nodes.slice(1).map((n) => n.ref) });
      const ids = await queue.enqueueGraph(nodes);
      const workers: string[] = [];
      const onWorker = (w: { url(): string }) => workers.push(new URL(w.url()).pathname);
      page.on('worker', onWorker);
      try {
        await page.goto('about:blank'); // a fresh page: no layout worker yet
        await page.goto(`${base}/dashboard#/`);
        await page.locator('.count-card').first().waitFor();
        expect(workers).toEqual([]); // the overview does not load the layout engine
        await page.evaluate(`location.hash = '#/graph/${ids.root}'`);
        await page.locator('#dag g.node').first().waitFor({ timeout: 90_000 });
        expect(await page.locator('#graph-info').textContent()).toBe('1000 jobs, 1996 dependencies, 0 done.');
        expect(await page.locator('#dag g.node').count()).toBe(1000);
        expect(workers).toEqual(['/dashboard/assets/elk-worker.js']);
        // Three layers of 176 px boxes; routed edge by edge, the 998 edges of each side took 15,000 px.
        expect(Number(await page.locator('#dag').getAttribute('width'))).toBeLessThan(1_500);
        await page.screenshot({ path: join(shots, 'graph-fan-out.png') });

        // A worker that cannot load (here a 503 for its script): the page says so, then draws once it can.
        await page.route('**/assets/elk-worker.js', (route) => route.fulfill({ status: 503, body: 'unavailable' }));
        await page.goto('about:blank');
        await page.goto(`${base}/dashboard#/graph/${ids.root}`);
        await page.locator('#graph-error').waitFor({ timeout: 30_000 });
        expect(await page.locator('#graph-error').textContent()).toMatch(/^Could not lay out the graph: the graph layout worker failed to load\. Trying again…$/);
        await page.unroute('**/assets/elk-worker.js');
        await page.locator('#dag g.node').first().waitFor({ timeout: 90_000 });
        expect(await page.locator('#graph-error').count()).toBe(0);
      } finally {
        page.off('worker', onWorker);
        await page.unroute('**/assets/elk-worker.js');
        await queue.cancel(ids.root);
      }
    }, 240_000);

    it("follows a running job to its worker and back: the job page's worker opens the jobs it holds, as the overview's workers card does", async () => {
      heldGate = new Promise<void>((r) => (releaseHeld = r));
      const job = await queue.enqueue({ type: 'held' });
      try {
        await eventually('the held job running', async () => (await queue.get(job.id))!.state === 'running', 20_000, 50);
        await page.goto(`${base}/dashboard#/job/${job.id}`);
        const worker = page.locator('#job-worker');
        await worker.waitFor();
        const owner = (await worker.textContent())!;
        expect(owner.length).toBeGreaterThan(0);
        await worker.click();
        // The jobs it holds, said above the table; Apply keeps the scope, ✕ drops it.
        const row = page.locator(`#jobs-table tr[data-id="${job.id}"]`);
        await row.waitFor();
        expect(await page.locator('#jobs-scope').textContent()).toBe(`Held by worker ${owner} now (leased or running) ✕`);
        expect(await page.locator('#jobs-table tbody tr td:nth-child(3)').allTextContents()).toEqual(expect.arrayContaining(['running']));
        expect((await page.locator('#jobs-table tbody tr td:nth-child(3)').allTextContents()).every((st) => st === 'running' || st === 'leased')).toBe(true);
        await page.selectOption('#f-state', 'done');
        await page.click('#jobs-filter button[type="submit"]');
        await page.locator('#no-jobs').waitFor();
        expect(new URLSearchParams(page.url().split('?')[1]).get('worker')).toBe(owner);
        await page.click('#jobs-scope a[aria-label]');
        // The address changes first, the page at the hashchange event that follows (CI under load saw
        // the old scope still there right after the address changed).
        await eventually('the scope dropped', async () => !page.url().includes('worker=') && (await page.locator('#jobs-scope').count()) === 0, 10_000, 50);

        // The overview's workers card links the same list.
        await page.goto(`${base}/dashboard#/`);
        const workerRow = page.locator(`#workers-table tr[data-worker="${owner.replace(/["\\]/g, '\\$&')}"]`);
        const link = workerRow.locator('a');
        await link.waitFor();
        // Its heartbeat's age moves at every refresh; the row and its link stay (no lost click).
        await link.evaluate((a) => ((a as unknown as { kept: boolean }).kept = true));
        const age = await workerRow.locator('td').nth(2).textContent();
        await eventually('a refresh moved the heartbeat', async () => (await workerRow.locator('td').nth(2).textContent()) !== age, 20_000, 100);
        expect(await link.evaluate((a) => (a as unknown as { kept?: boolean }).kept === true)).toBe(true);
        await link.click();
        await row.waitFor();
        expect(await page.locator('#jobs-scope code').textContent()).toBe(owner);
        await page.screenshot({ path: join(shots, 'jobs-of-worker.png'), fullPage: true });
      } finally {
        releaseHeld();
      }
      await queue.waitFor(job.id, { timeoutMs: 20_000 });
      // Settled: held by no one, so the job page names no worker.
      await page.goto(`${base}/dashboard#/job/${job.id}`);
      await eventually('the job page shows done', async () => (await page.locator('.job-head .badge').textContent()) === 'done', 20_000, 100);
      expect(await page.locator('#job-worker').count()).toBe(0);
    });

    it('renders XSS payloads in type, group, args and error as text, running nothing', async () => {
      const job = await queue.enqueue({ type: XSS_TYPE, group: XSS_GROUP, args: { html: XSS_ERROR } });
      await queue.waitFor(job.id, { timeoutMs: 20_000 });
      await page.goto(`${base}/dashboard#/jobs?${new URLSearchParams({ type: XSS_TYPE })}`);
      const row = page.locator(`#jobs-table tr[data-id="${job.id}"]`);
      await row.waitFor();
      expect(await row.locator('td.type').textContent()).toBe(XSS_TYPE);
      expect(await row.locator('td').nth(3).textContent()).toBe(XSS_GROUP);
      // Failed for good: its error in the list is the failure's, in the danger colour.
      expect(await row.locator('td.cell-error').getAttribute('class')).toBe('cell-error');
      expect(await row.locator('td.cell-error').textContent()).toContain(XSS_ERROR);
      await page.goto(`${base}/dashboard#/job/${job.id}`);
      await page.locator('#job-error').waitFor();
      expect(await page.locator('#job-type').textContent()).toBe(XSS_TYPE);
      expect(await page.locator('#job-error pre').textContent()).toContain(XSS_ERROR);
      expect(JSON.parse((await page.locator('#job-args pre').textContent())!)).toEqual({ html: XSS_ERROR });
      await page.goto(`${base}/dashboard#/graph/${job.id}`);
      await page.locator(`#dag g.node[data-id="${job.id}"]`).waitFor();
      await page.goto(`${base}/dashboard#/`);
      await page.locator('.count-card').first().waitFor();
      const state = await page.evaluate(
        `({ xss: window.__xss ?? null, csp: window.__csp, imgs: document.querySelectorAll('img').length, scripts: document.querySelectorAll('script').length })`,
      );
      expect(state).toEqual({ xss: null, csp: [], imgs: 0, scripts: 1 });
    });

    it("shows a job's log as text, new lines while it runs, and Load more", async () => {
      const lines = [
        'fetching 3 sources for tenant acme',
        'crm: 1,204 rows in 312 ms',
        XSS_ERROR,
        XSS_TYPE,
        'response body:\n{\n  "status": "partial",\n  "missing": ["web"]\n}',
        `warning: slow source, retrying ${'with a long line that has to wrap inside the message column '.repeat(3)}`,
      ];
      const after = ['web: 88 rows in 1.2 s', 'aggregated 1,292 rows; done'];
      const job = await queue.enqueue({ type: 'logger', args: { lines, gate: true, after } });
      await eventually('the first lines stored', async () => (await queue.getLogs(job.id)).logs.length === lines.length, 20_000, 50);
      await page.goto(`${base}/dashboard#/job/${job.id}`);
      const messages = page.locator('#job-log-lines td.log-message');
      await eventually('the running job’s lines', async () => (await messages.count()) === lines.length, 20_000, 100);
      expect(await page.locator('.job-head .badge').textContent()).toBe('running');
      expect(await messages.allTextContents()).toEqual(lines);
      expect(await page.locator('#job-log-lines tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-attempt')))).toEqual(lines.map(() => '1'));
      // Monospace, newlines and indentation kept.
      const shown = await page.evaluate(`(() => {
        const td = document.querySelectorAll('#job-log-lines td.log-message')[4];
        return { ws: getComputedStyle(td).whiteSpace, font: getComputedStyle(td).fontFamily, text: td.innerText };
      })()`);
      expect(shown).toMatchObject({ ws: 'pre-wrap', font: expect.stringMatching(/mono/i) });
      expect((shown as { text: string }).text).toContain('\n  "status": "partial",\n');
      expect(await page.locator('#job-log-lines td.log-message img, #job-log-lines td.log-message script').count()).toBe(0);
      expect(await page.locator('#no-log-lines').count()).toBe(0);
      expect(await page.locator('#log-more').count()).toBe(0);
      await page.evaluate('window.__sameDocument = true');
      // A selection in the log survives the 2 s refresh: rows are appended, never rebuilt.
      await page.evaluate(`getSelection().selectAllChildren(document.querySelector('#job-log-lines td.log-message'))`);
      await page.screenshot({ path: join(shots, 'job-log-running.png'), fullPage: true });

      openLogGate();
      await eventually('the lines logged after the gate', async () => (await messages.count()) === lines.length + after.length, 20_000, 100);
      expect(await messages.allTextContents()).toEqual([...lines, ...after]);
      await eventually('job page shows done', async () => (await page.locator('.job-head .badge').textContent()) === 'done', 20_000, 100);
      expect(await page.evaluate('window.__sameDocument')).toBe(true); // no reload
      expect(await page.evaluate(`getSelection().toString()`)).toBe('fetching 3 sources for tenant acme');
      await page.screenshot({ path: join(shots, 'job-log.png'), fullPage: true });
      const state = await page.evaluate(`({ xss: window.__xss ?? null, csp: window.__csp, imgs: document.querySelectorAll('img').length, scripts: document.querySelectorAll('script').length })`);
      expect(state).toEqual({ xss: null, csp: [], imgs: 0, scripts: 1 });

      // 230 lines: the first 200, then the rest on request.
      const many = Array.from({ length: 230 }, (_, i) => `line ${i}`);
      const long = await queue.enqueue({ type: 'logger', args: { lines: many } });
      await queue.waitFor(long.id, { timeoutMs: 20_000 });
      await page.goto(`${base}/dashboard#/job/${long.id}`);
      await eventually('the first page of lines', async () => (await messages.count()) === 200, 20_000, 100);
      expect(await messages.last().textContent()).toBe('line 199');
      await page.click('#log-more');
      await eventually('all 230 lines', async () => (await messages.count()) === 230, 20_000, 100);
      expect(await messages.allTextContents()).toEqual(many);
      expect(await page.locator('#log-more').count()).toBe(0);
      await page.waitForTimeout(2_500); // a refresh or two later: no line twice
      expect(await messages.count()).toBe(230);

      // A job that logged nothing says so.
      const quiet = await queue.enqueue({ type: 'step' });
      await queue.waitFor(quiet.id, { timeoutMs: 20_000 });
      await page.goto(`${base}/dashboard#/job/${quiet.id}`);
      await page.locator('#no-log-lines').waitFor();
      expect(await page.locator('#no-log-lines').textContent()).toBe('No log lines');
      expect(await page.locator('#job-log-lines').count()).toBe(0);
    });

    it("shows a retry's lines after the earlier ones, its attempts starting over at 1, none twice", async () => {
      const job = await queue.enqueue({ type: 'relogger' });
      await page.goto(`${base}/dashboard#/job/${job.id}`);
      const rows = page.locator('#job-log-lines tbody tr');
      // An attempt's error (level error, written with the failure) is marked "failed"; its stack is cut here.
      const shown = () => rows.evaluateAll((trs) => trs.map((tr) => `${tr.getAttribute('data-attempt')}: ${tr.lastElementChild!.textContent!.split('\n')[0]}`));
      await eventually('job page shows failed', async () => (await page.locator('.job-head .badge').textContent()) === 'failed', 30_000, 100);
      await eventually('both attempts’ lines and errors', async () => (await shown()).length === 4, 20_000, 100);
      expect(await shown()).toEqual(['1: run 1', '1: failed Error: run 1 fails on purpose', '2: run 2', '2: failed Error: run 2 fails on purpose']);
      expect(await page.locator('#job-log-lines tr.log-level-error').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-level')))).toEqual(['error', 'error']);
      await page.click('#retry-job');
      await eventually('job page shows done', async () => (await page.locator('.job-head .badge').textContent()) === 'done', 30_000, 100);
      // In the order written: the retry's attempts 1 and 2 after the first run's.
      const fails = (run: number) => `failed Error: run ${run} fails on purpose`;
      const order = ['1: run 1', `1: ${fails(1)}`, '2: run 2', `2: ${fails(2)}`, '1: run 3', `1: ${fails(3)}`, '2: run 4'];
      await eventually('the log in getLogs’ order', async () => (await shown()).join() === order.join(), 20_000, 100);
      expect((await queue.getLogs(job.id)).logs.map((l) => `${l.attempt}: ${l.level === 'error' ? 'failed ' : ''}${l.message.split('\n')[0]}`)).toEqual(await shown());
      expect(await page.locator('#job-log-lines tr.attempt-start').count()).toBe(3); // a rule wherever the attempt changes
      // Done, with an earlier attempt's error still in lastError: not shown as if the job had failed.
      expect((await queue.get(job.id))!.lastError).toMatch(/run 3 fails on purpose/);
      await eventually('the last error card', async () => (await page.locator('#job-error h2').textContent()) === 'Last error', 10_000, 100);
      expect(await page.locator('#job-error-note').textContent()).toMatch(/error of each attempt/);
      // "Errors only": the error history alone (?level=error), then every line again.
      await page.click('#log-errors-only');
      await eventually('the errors alone', async () => (await shown()).join() === [`1: ${fails(1)}`, `2: ${fails(2)}`, `1: ${fails(3)}`].join(), 20_000, 100);
      expect(await page.locator('#log-errors-only').getAttribute('aria-pressed')).toBe('true');
      await page.waitForTimeout(2_500); // a refresh later: still the errors alone, none twice
      expect(await shown()).toHaveLength(3);
      await page.locator('#job-log').screenshot({ path: join(shots, 'job-log-errors-only.png') });
      await page.click('#log-errors-only');
      await eventually('every line again', async () => (await shown()).join() === order.join(), 20_000, 100);
      // One attempt's lines (?attempt=), both runs' attempt 1; with "Errors only", its errors alone.
      expect(await page.locator('#log-attempt option').allTextContents()).toEqual(['All attempts', 'Attempt 1', 'Attempt 2']);
      await page.selectOption('#log-attempt', '1');
      await eventually('attempt 1 alone', async () => (await shown()).join() === ['1: run 1', `1: ${fails(1)}`, '1: run 3', `1: ${fails(3)}`].join(), 20_000, 100);
      await page.click('#log-errors-only');
      await eventually('attempt 1’s errors', async () => (await shown()).join() === [`1: ${fails(1)}`, `1: ${fails(3)}`].join(), 20_000, 100);
      await page.locator('#job-log').screenshot({ path: join(shots, 'job-log-attempt-errors.png') });
      await page.selectOption('#log-attempt', '');
      await page.click('#log-errors-only');
      await eventually('every line once more', async () => (await shown()).join() === order.join(), 20_000, 100);
      await page.locator('#job-log').screenshot({ path: join(shots, 'job-log-retried.png') });

      // Should a page ever not continue the lines shown, the log is read again, not patched: here
      // the first answer is altered, and the next (real) one replaces it, no line twice.
      const real = await shown();
      // Left first, so that the answer altered is the new page's: the page left reads no more
      // (a refresh of it still on its way would otherwise take the altered answer).
      await page.goto(`${base}/dashboard#/`);
      await page.waitForFunction(`!document.title.startsWith('Job #')`);
      let altered = false;
      await page.route('**/api/jobs/*/logs*', async (route) => {
        if (altered) return route.continue();
        altered = true;
        const response = await route.fetch();
        const body = (await response.json()) as { logs: Array<{ message: string }> };
        await route.fulfill({ response, json: { ...body, logs: body.logs.slice(0, 2).map((l) => ({ ...l, message: `stale ${l.message}` })) } });
      });
      try {
        await page.goto(`${base}/dashboard#/job/${job.id}`);
        await eventually('the altered page', async () => (await shown()).join() === `1: stale run 1,1: failed stale Error: run 1 fails on purpose`, 20_000, 50);
        await eventually('the real log again', async () => (await shown()).join() === real.join(), 20_000, 100);
      } finally {
        await page.unroute('**/api/jobs/*/logs*');
      }

      // In the jobs list too, the done job's error is an earlier attempt's, muted and said so.
      await page.goto(`${base}/dashboard#/jobs?type=relogger`);
      const cell = page.locator(`#jobs-table tr[data-id="${job.id}"] td.cell-error`);
      await cell.waitFor();
      expect(await cell.getAttribute('class')).toBe('cell-error earlier');
      expect(await cell.getAttribute('title')).toBe('Of an earlier attempt');
      expect(await cell.textContent()).toMatch(/^earlier attempt: Error: run 3 fails on purpose/);
    });

    it('lists recurring schedules, pages and filters them, and shows their content as text', async () => {
      const names: string[] = [];
      for (let i = 0; i < 55; i++) {
        names.push(`browser-${String(i).padStart(2, '0')}`);
        await queue.schedule({ name: names[i], cron: '0 0 1 1 *', type: 'step', args: { tenant: `t${i}` }, group: `tenant-${i}` });
      }
      await queue.schedule({ name: 'browser-xss', cron: '0 0 1 1 *', type: XSS_TYPE, args: { html: XSS_ERROR }, group: XSS_GROUP });
      // As if an @Recurring had been removed from the code a minute ago: dormant, its next slot not shown.
      const jq = app.get(JobQueueDatabase);
      await jq.run(sql`UPDATE job_queue_schedules SET declared_until = ${jq.dialect.timeParam(new Date(Date.now() - 60_000))} WHERE name = 'browser-03'`);
      try {
        await page.goto(`${base}/dashboard#/schedules`);
        const rows = page.locator('#schedules-table tbody tr');
        await eventually('a full first page', async () => (await rows.count()) === 50, 20_000, 100);
        expect(await page.locator('#schedules-table tr[data-name="browser-03"] td').nth(5).textContent()).toBe('dormant');
        expect(await page.locator('#schedules-table tr[data-name="browser-04"] td').nth(5).textContent()).not.toBe('dormant');
        expect(await page.locator('#schedule-count').textContent()).toMatch(/^[\d,]+ schedules? in all\.$/);
        await page.screenshot({ path: join(shots, 'schedules.png') });
        const firstPage = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-name')));
        await page.click('#next-page');
        await eventually('the second page', async () => (await rows.first().getAttribute('data-name')) !== firstPage[0], 20_000, 100);
        const secondPage = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-name')));
        expect(secondPage.filter((n) => firstPage.includes(n))).toEqual([]);
        expect([...firstPage, ...secondPage].filter((n) => n?.startsWith('browser-'))).toEqual(expect.arrayContaining([...names, 'browser-xss']));
        await page.click('#prev-page');
        await eventually('back on the first page', async () => (await rows.first().getAttribute('data-name')) === firstPage[0], 20_000, 100);

        await page.fill('#f-schedule-type', XSS_TYPE);
        await page.click('#schedules-filter button[type=submit]');
        await eventually('only the XSS schedule', async () => (await rows.count()) === 1 && (await rows.first().getAttribute('data-name')) === 'browser-xss', 20_000, 100);
        expect(await rows.first().locator('td.type').textContent()).toBe(XSS_TYPE);
        expect(await rows.first().locator('td').nth(4).textContent()).toBe(XSS_GROUP);
        expect(JSON.parse((await rows.first().locator('td.cell-args').textContent())!)).toEqual({ html: XSS_ERROR });
        await page.screenshot({ path: join(shots, 'schedules-filtered.png') });
        const state = await page.evaluate(`({ xss: window.__xss ?? null, csp: window.__csp, imgs: document.querySelectorAll('img').length })`);
        expect(state).toEqual({ xss: null, csp: [], imgs: 0 });
        // A schedule's group links to that group's schedules (its value in the filter, as text).
        await page.goto(`${base}/dashboard#/schedules`);
        await rows.locator('td a', { hasText: 'tenant-7' }).first().click();
        await eventually('the tenant-7 schedules only', async () => (await rows.count()) === 1 && (await rows.first().getAttribute('data-name')) === 'browser-07', 20_000, 100);
        expect(await page.inputValue('#f-schedule-group')).toBe('tenant-7');
        await page.goto(`${base}/dashboard#/schedules?${new URLSearchParams({ group: XSS_GROUP })}`);
        await eventually('the XSS group filter', async () => (await rows.count()) === 1 && (await rows.first().getAttribute('data-name')) === 'browser-xss', 20_000, 100);
        expect(await page.inputValue('#f-schedule-group')).toBe(XSS_GROUP);
        // A schedule's type links to the jobs it enqueued.
        await rows.first().locator('td.type a').click();
        await page.locator('#jobs-filter').waitFor();
        expect(new URLSearchParams(page.url().split('?')[1]).get('type')).toBe(XSS_TYPE);
      } finally {
        for (const name of [...names, 'browser-xss']) await queue.unschedule(name);
      }
    });

    it("shows each schedule's last slot with its job's state and a link to it, filters the failing ones; the job's page links back to its schedule", async () => {
      /** Refreshes the page now (as when its tab becomes visible) instead of at its next 5 s tick, and waits for its read. */
      const refreshNow = async () => {
        const read = page.waitForResponse((r) => r.url().includes('/dashboard/api/schedules'));
        await page.evaluate(`document.dispatchEvent(new Event('visibilitychange'))`);
        await read;
      };
      await queue.schedule({ name: 'browser-every', cron: '* * * * * *', type: 'flaky', group: 'browser-last' });
      await queue.schedule({ name: 'browser-every.not', cron: '0 0 1 1 *', type: 'flaky', group: 'browser-last' });
      try {
        await page.goto(`${base}/dashboard#/schedules?${new URLSearchParams({ group: 'browser-last' })}`);
        const row = (name: string) => page.locator(`#schedules-table tr[data-name="${name}"]`);
        await row('browser-every').waitFor();
        expect(await row('browser-every.not').locator('td.last-slot').textContent()).toBe('—');
        // One slot, then no more: the last one stays the last.
        const lastRun = async () => (await queue.findSchedules({ name: 'browser-every' })).schedules[0].lastRunAt;
        await eventually('a first slot', async () => (await lastRun()) !== null, 20_000, 100);
        await queue.schedule({ name: 'browser-every', cron: '0 0 1 1 *', type: 'flaky', group: 'browser-last' });
        const [job] = (await queue.find({ key: `recurring:browser-every:${(await lastRun())!.toISOString()}` })).jobs;
        // A flaky job fails its one attempt on a first run: the row says so, in the failed colour.
        expect((await queue.waitFor(job.id, { timeoutMs: 30_000 })).state).toBe('failed');
        await refreshNow();
        const link = row('browser-every').locator('a.last-job');
        await eventually('the link to the last slot\'s job', async () => (await link.getAttribute('href')) === `#/job/${job.id}`, 20_000, 100);
        expect(await link.locator('.badge').textContent()).toBe('failed');
        expect(await link.locator('.badge').getAttribute('class')).toBe('badge st-failed');
        await page.screenshot({ path: join(shots, 'schedules-last-slot.png') });

        // "Which schedules are failing?": the Last run filter keeps the group and lists only the
        // schedules whose last slot's job failed (the other has not fired), then none that are done.
        const rows = page.locator('#schedules-table tbody tr');
        await page.selectOption('#f-schedule-lastRun', 'failed,cancelled');
        await page.click('#schedules-filter button[type=submit]');
        await page.waitForURL(`**/dashboard#/schedules?group=browser-last&lastRun=failed%2Ccancelled`);
        await eventually('the failing schedule alone', async () => (await rows.count()) === 1 && (await rows.first().getAttribute('data-name')) === 'browser-every', 20_000, 100);
        expect(await page.inputValue('#f-schedule-lastRun')).toBe('failed,cancelled');
        expect(await page.inputValue('#f-schedule-group')).toBe('browser-last');
        await page.screenshot({ path: join(shots, 'schedules-failing.png') });
        await page.selectOption('#f-schedule-lastRun', 'done');
        await page.click('#schedules-filter button[type=submit]');
        await page.locator('#no-schedules:not([hidden])').waitFor();
        // The overview counts them (a snapshot of at most 15 s) and links to that list.
        await page.goto(`${base}/dashboard#/`);
        const failing = page.locator('#failing-schedules a.failing');
        const expected = String((await queue.findSchedules({ lastRunState: 'failed' }, { limit: 500 })).schedules.length);
        await eventually('the overview counts the failing schedule', async () => (await failing.count()) === 1 && (await failing.textContent()) === expected, 30_000, 200);
        await page.locator('section.card', { has: page.locator('#failing-schedules') }).screenshot({ path: join(shots, 'overview-failing-schedules.png') });
        await failing.click();
        await page.waitForURL('**/dashboard#/schedules?lastRun=failed');
        await eventually('the failing schedules listed', async () => (await row('browser-every').count()) === 1, 20_000, 100);
        expect(await page.inputValue('#f-schedule-lastRun')).toBe('failed');
        await page.goto(`${base}/dashboard#/schedules?${new URLSearchParams({ group: 'browser-last', lastRun: 'failed,cancelled' })}`);
        await eventually('the failing schedule again', async () => (await rows.count()) === 1 && (await row('browser-every').locator('a.last-job').count()) === 1, 20_000, 100);

        await link.click();
        await page.waitForURL(`**/dashboard#/job/${job.id}`);
        await page.locator('#job-schedule').waitFor();
        expect(await page.locator('#job-schedule').textContent()).toBe('browser-every');
        // Its runs: the schedule's slot jobs (find({ schedule })), newest first, this one on top.
        const runs = (await queue.find({ schedule: 'browser-every' })).jobs.map((j) => String(j.id));
        expect(runs[0]).toBe(String(job.id));
        await page.click('#job-schedule-runs');
        await page.locator('#jobs-scope').waitFor();
        expect(await page.locator('#jobs-scope').textContent()).toBe('Runs of schedule browser-every (its slots, not its Run now jobs) ✕');
        const runRows = page.locator('#jobs-table tbody tr');
        await eventually('the schedule\'s runs listed', async () => (await runRows.count()) === runs.length, 20_000, 100);
        expect(await runRows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')))).toEqual(runs);
        expect(await runRows.first().locator('.badge').textContent()).toBe('failed');
        await page.screenshot({ path: join(shots, 'jobs-schedule-runs.png') });
        // The scope links back to the schedule.
        await page.click('#jobs-scope a.mono');
        await eventually('the schedule from its runs', async () => (await rows.count()) === 1 && (await rows.first().getAttribute('data-name')) === 'browser-every', 20_000, 100);
        // And its row links to its runs.
        expect(await row('browser-every').locator('a.runs').getAttribute('href')).toBe('#/jobs?schedule=browser-every');
        await page.goBack();
        await page.goBack();
        await page.locator('#job-schedule').waitFor();
        await page.click('#job-schedule');
        // That schedule alone, not the one whose name it begins.
        await eventually('the schedule by name', async () => (await rows.count()) === 1 && (await rows.first().getAttribute('data-name')) === 'browser-every', 20_000, 100);
        expect(await page.inputValue('#f-schedule-name')).toBe('browser-every');

        // Its job removed: the row says so instead of linking nowhere.
        await queue.remove(job.id);
        await refreshNow();
        await eventually('the removed job said so', async () => (await row('browser-every').locator('td.last-slot span.muted').allTextContents()).join() === 'removed', 20_000, 100);
        expect(await row('browser-every').locator('a.last-job').count()).toBe(0);
      } finally {
        for (const name of ['browser-every', 'browser-every.not']) await queue.unschedule(name);
      }
    });

    it('runs a schedule now from its row and removes another, each after a confirmation; a declared @Recurring offers no Remove', async () => {
      const jq = app.get(JobQueueDatabase);
      const names = ['browser-run', 'browser-drop', 'browser-declared'];
      for (const name of names) await queue.schedule({ name, cron: '0 0 1 1 *', type: 'step', args: { name }, group: 'browser-act' });
      // As a running process's @Recurring: the server would refuse its removal, so the row offers none.
      await jq.run(sql`UPDATE job_queue_schedules SET declared_until = ${jq.dialect.timeParam(new Date(Date.now() + 600_000))} WHERE name = 'browser-declared'`);
      try {
        await page.goto(`${base}/dashboard#/schedules?${new URLSearchParams({ group: 'browser-act' })}`);
        const row = (name: string) => page.locator(`#schedules-table tr[data-name="${name}"]`);
        await row('browser-run').waitFor();
        expect(await row('browser-declared').locator('button').allTextContents()).toEqual(['Run now']);
        expect(await row('browser-declared').locator('td').first().textContent()).toBe('browser-declared@Recurring');
        expect(await row('browser-run').locator('button').allTextContents()).toEqual(['Run now', 'Remove']);
        const nextSlot = await row('browser-run').locator('td').nth(5).textContent();

        // Dismissed: nothing is sent.
        await page.evaluate(`window.confirm = () => false`);
        await row('browser-run').locator('button.run-now').click();
        await row('browser-drop').locator('button.remove').click();
        expect(await page.locator('#schedule-result').textContent()).toBe('');
        expect((await queue.find({ type: 'step', argsContains: { name: 'browser-run' } })).jobs).toEqual([]);
        await page.reload();
        await row('browser-run').waitFor();

        acceptDialog = 'Run schedule "browser-run" once now?';
        await row('browser-run').locator('button.run-now').click();
        await page.locator('#schedule-result a').waitFor();
        expect(acceptDialog).toBeNull();
        const [job] = (await queue.find({ type: 'step', argsContains: { name: 'browser-run', manual: true } })).jobs;
        expect(await page.locator('#schedule-result').textContent()).toBe(`Enqueued job #${job.id} for schedule browser-run.`);
        expect((await queue.waitFor(job.id, { timeoutMs: 30_000 })).state).toBe('done');
        expect(await row('browser-run').locator('td').nth(5).textContent()).toBe(nextSlot);
        await page.screenshot({ path: join(shots, 'schedules-run-now.png') });
        await page.click('#schedule-result a');
        await page.waitForURL(`**/dashboard#/job/${job.id}`);
        await page.locator('#job-args').waitFor();
        expect(JSON.parse((await page.locator('#job-args pre').textContent())!)).toMatchObject({ name: 'browser-run', manual: true, slot: expect.any(String) });

        await page.goto(`${base}/dashboard#/schedules?${new URLSearchParams({ group: 'browser-act' })}`);
        await row('browser-drop').waitFor();
        acceptDialog = 'Remove schedule "browser-drop"?';
        await row('browser-drop').locator('button.remove').click();
        await eventually('the removed row gone', async () => (await row('browser-drop').count()) === 0, 20_000, 100);
        expect(acceptDialog).toBeNull();
        expect(await page.locator('#schedule-result').textContent()).toBe('Removed schedule browser-drop.');
        expect((await queue.listSchedules()).map((s) => s.name).filter((n) => names.includes(n)).sort()).toEqual(['browser-declared', 'browser-run']);

        // Removed meanwhile by someone else: the server's 404 is shown, nothing enqueued.
        await queue.unschedule('browser-run');
        acceptDialog = 'Run schedule "browser-run" once now?';
        await row('browser-run').locator('button.run-now').click();
        await eventually('the error shown', async () => (await page.locator('#schedules-error').textContent()) === 'No recurring schedule named "browser-run".', 20_000, 100);
        expect((await queue.find({ type: 'step', argsContains: { name: 'browser-run' } })).jobs.map((j) => j.id)).toEqual([job.id]);
        // Chromium logs the failed request's 404 as a console error: the one this test expects.
        await eventually('the 404 logged', async () => problems.some((p) => p.includes('status of 404')), 10_000, 50);
        problems.splice(problems.findIndex((p) => p.includes('status of 404')), 1);
      } finally {
        acceptDialog = null;
        for (const name of names) await queue.unschedule(name);
      }
    });

    it('redraws only what changed: a selection, a pressed button and unchanged rows survive refreshes on the job, schedules and overview pages', async () => {
      /** Refreshes the page now (as when its tab becomes visible) and waits for the API read it makes. */
      const refreshNow = async (api: string) => {
        const read = page.waitForResponse((r) => r.url().includes(`/dashboard/api/${api}`));
        await page.evaluate(`document.dispatchEvent(new Event('visibilitychange'))`);
        await read;
        await page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))');
      };
      const mark = (selector: string) => page.evaluate(`document.querySelector(${JSON.stringify(selector)}).__kept = true`);
      const kept = (selector: string) => page.evaluate(`document.querySelector(${JSON.stringify(selector)})?.__kept === true`);

      // A job page: its priority changes, its args and buttons do not.
      const job = await queue.enqueue({ type: 'step', group: 'browser-redraw', args: { keep: 'this text selected' }, runAfter: new Date(Date.now() + 3_600_000) });
      try {
        await page.goto(`${base}/dashboard#/job/${job.id}`);
        await page.locator('#cancel-job').waitFor();
        await mark('#cancel-job');
        await mark('#job-args pre');
        const argsText = await page.locator('#job-args pre').textContent();
        await page.evaluate(`getSelection().selectAllChildren(document.querySelector('#job-args pre'))`);
        await queue.reschedule(job.id, { priority: 7 });
        await eventually('the new priority shown', async () => /priority\s+7/.test(await page.locator('dl.facts').first().innerText()), 20_000, 100);
        await refreshNow(`jobs/${job.id}`);
        expect(await kept('#cancel-job')).toBe(true);
        expect(await kept('#job-args pre')).toBe(true);
        expect(await page.evaluate('getSelection().toString()')).toBe(argsText);
      } finally {
        await queue.cancel(job.id);
      }

      // The schedules page: a tick moves one schedule's slot; the other row stays, and a click
      // pressed before a refresh and released after it still lands.
      const names = ['browser-redraw-a', 'browser-redraw-b'];
      for (const name of names) await queue.schedule({ name, cron: '0 0 1 1 *', type: 'step', group: 'browser-redraw' });
      try {
        await page.goto(`${base}/dashboard#/schedules?${new URLSearchParams({ group: 'browser-redraw' })}`);
        const row = (name: string) => `#schedules-table tr[data-name="${name}"]`;
        await page.locator(row('browser-redraw-b')).waitFor();
        await mark(row('browser-redraw-a'));
        await mark(row('browser-redraw-b'));
        await queue.schedule({ name: 'browser-redraw-b', cron: '0 0 1 2 *', type: 'step', group: 'browser-redraw' });
        await refreshNow('schedules');
        expect(await page.locator(`${row('browser-redraw-b')} td`).nth(2).textContent()).toBe('0 0 1 2 *');
        expect(await kept(row('browser-redraw-a'))).toBe(true);
        expect(await kept(row('browser-redraw-b'))).toBe(false);

        await page.evaluate(`window.__asked = []; window.confirm = (q) => (window.__asked.push(q), false)`);
        const box = (await page.locator(`${row('browser-redraw-a')} button.run-now`).boundingBox())!;
        await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
        await page.mouse.down();
        await refreshNow('schedules');
        await page.mouse.up();
        expect(await page.evaluate('window.__asked')).toEqual([expect.stringContaining('Run schedule "browser-redraw-a" once now?')]);
        await page.reload(); // the browser's own confirm() back
      } finally {
        for (const name of names) await queue.unschedule(name);
      }

      // The overview: the count cards (links) are updated in place as the counts move.
      await page.goto(`${base}/dashboard#/`);
      await page.locator('.count-card[data-state="ready"] .count-n').waitFor();
      await eventually('counts loaded', async () => (await page.locator('.count-card[data-state="ready"] .count-n').textContent()) !== '…', 20_000, 100);
      await mark('.count-card[data-state="ready"]');
      const before = await page.locator('.count-card[data-state="ready"] .count-n').textContent();
      const waiting = [await queue.enqueue({ type: 'step', group: 'browser-redraw', runAfter: new Date(Date.now() + 3_600_000) })];
      try {
        await eventually('the ready count moved', async () => (await page.locator('.count-card[data-state="ready"] .count-n').textContent()) !== before, 20_000, 100);
        expect(await kept('.count-card[data-state="ready"]')).toBe(true);
        // A group's row keeps its link while its figures move.
        const group = '#groups-table tr[data-group="browser-redraw"]';
        await page.locator(group).waitFor();
        expect(await page.locator(`${group} td`).nth(1).textContent()).toBe('1');
        await mark(`${group} a`);
        waiting.push(await queue.enqueue({ type: 'step', group: 'browser-redraw', runAfter: new Date(Date.now() + 3_600_000) }));
        await eventually('the group\'s ready figure moved', async () => (await page.locator(`${group} td`).nth(1).textContent()) === '2', 20_000, 100);
        expect(await kept(`${group} a`)).toBe(true);
      } finally {
        for (const job of waiting) await queue.cancel(job.id);
      }

      // The Paused card: another process pausing (then resuming) a second group leaves the first
      // entry's Resume button where it was.
      const entry = (name: string) => `#paused-list li[data-kind="group"][data-name="${name}"]`;
      try {
        await queue.pause({ group: 'browser-redraw-a' });
        await eventually('the first pause listed', async () => (await page.locator(entry('browser-redraw-a')).count()) === 1, 20_000, 100);
        await mark(`${entry('browser-redraw-a')} button.resume`);
        await queue.pause({ group: 'browser-redraw-b' });
        await eventually('the second pause listed', async () => (await page.locator(entry('browser-redraw-b')).count()) === 1, 20_000, 100);
        expect(await kept(`${entry('browser-redraw-a')} button.resume`)).toBe(true);
        await queue.resume({ group: 'browser-redraw-b' });
        await eventually('the second pause gone', async () => (await page.locator(entry('browser-redraw-b')).count()) === 0, 20_000, 100);
        expect(await kept(`${entry('browser-redraw-a')} button.resume`)).toBe(true);
      } finally {
        await queue.resume({ group: 'browser-redraw-a' });
        await queue.resume({ group: 'browser-redraw-b' });
      }
    });

    it('pauses a group from the overview, holds its jobs, and resumes it; a name is text, a bad one gets the server\'s error', async () => {
      const group = 'pause-ui';
      const listed = (kind: string, name: string) => page.locator(`#paused-list li[data-kind="${kind}"][data-name="${name.replace(/["\\]/g, '\\$&')}"]`);
      await page.goto(`${base}/dashboard#/`);
      await page.locator('#pause-form').waitFor();
      try {
        // Typing survives the overview's 2 s refreshes: the card is not redrawn under the cursor.
        await page.selectOption('#pause-kind', 'group');
        await page.click('#pause-name');
        await page.keyboard.type(group);
        await page.waitForTimeout(2_500);
        expect(await page.inputValue('#pause-name')).toBe(group);
        expect(await page.evaluate(`document.activeElement && document.activeElement.id`)).toBe('pause-name');
        acceptDialog = `Pause group "${group}"?`;
        await page.click('#pause-submit');
        await listed('group', group).waitFor();
        expect(acceptDialog).toBeNull();
        expect(await page.inputValue('#pause-name')).toBe('');
        expect(await queue.listPaused()).toContainEqual({ group });
        // The "Now" card's count changed with the list, not a refresh later.
        expect(await page.locator('#paused-count').textContent()).toBe(`${(await queue.listPaused()).length} (listed below)`);

        // Paused: a job of the group stays ready however long the worker looks; resumed, it runs.
        const job = await queue.enqueue({ type: 'step', group });
        await page.waitForTimeout(2_000);
        expect((await queue.get(job.id))!.state).toBe('ready');
        await listed('group', group).locator('button.resume').click();
        await eventually('the group gone from the list', async () => (await listed('group', group).count()) === 0, 10_000, 100);
        expect(await queue.listPaused()).not.toContainEqual({ group });
        expect((await queue.waitFor(job.id, { timeoutMs: 20_000 })).state).toBe('done');

        // A hostile group name is shown as text, and resumed like any other.
        await page.selectOption('#pause-kind', 'group');
        await page.fill('#pause-name', XSS_GROUP);
        acceptDialog = 'Pause group ';
        await page.click('#pause-submit');
        await listed('group', XSS_GROUP).waitFor();
        expect(await listed('group', XSS_GROUP).locator('a').textContent()).toBe(XSS_GROUP);
        const state = await page.evaluate(`({ xss: window.__xss ?? null, csp: window.__csp, imgs: document.querySelectorAll('img').length })`);
        expect(state).toEqual({ xss: null, csp: [], imgs: 0 });
        await listed('group', XSS_GROUP).locator('button.resume').click();
        await eventually('the hostile group resumed', async () => (await listed('group', XSS_GROUP).count()) === 0, 10_000, 100);

        // No name: said at once, nothing sent. A name the API refuses: its error, nothing paused.
        const before = await queue.listPaused();
        await page.fill('#pause-name', '');
        await page.click('#pause-submit');
        expect(await page.locator('#pause-error').textContent()).toBe('Name the group to pause.');
        await page.evaluate(`document.querySelector('#pause-name').value = 'bad\\u0000name'`);
        acceptDialog = 'Pause group ';
        const seen = problems.length;
        await page.click('#pause-submit');
        await eventually('the API\'s error', async () => /NUL/.test((await page.locator('#pause-error').textContent()) ?? ''), 10_000, 100);
        expect(await queue.listPaused()).toEqual(before);
        // Chromium logs the 400 it was sent on purpose; only that one line is expected.
        const refused = problems.findIndex((line, i) => i >= seen && line.includes('status of 400'));
        expect(refused).toBeGreaterThanOrEqual(0);
        problems.splice(refused, 1);
        await page.screenshot({ path: join(shots, 'overview-paused.png'), fullPage: true });

        // The jobs page filtered by one group offers to pause it (a type list would not).
        await page.goto(`${base}/dashboard#/jobs?${new URLSearchParams({ group, type: 'step,flaky' })}`);
        await page.locator('#pause-group').waitFor();
        expect(await page.locator('#pause-type').count()).toBe(0);
        acceptDialog = `Pause group "${group}"?`;
        await page.click('#pause-group');
        await eventually('paused from the jobs page', async () => (await page.locator('#bulk-result').textContent()) === `Paused group ${group}: resume it on the overview.`, 10_000, 100);
        expect(acceptDialog).toBeNull();
        expect(await queue.listPaused()).toContainEqual({ group });
      } finally {
        acceptDialog = null;
        await queue.resume({ group });
        await queue.resume({ group: XSS_GROUP });
      }
    });

    it('lists the types with work on the overview, each figure a link to its jobs, and pauses and resumes a type from its row', async () => {
      const waiting = await queue.enqueue({ type: 'relogger', group: 'types-ui', runAfter: new Date(Date.now() + 3_600_000) });
      const hostile = await queue.enqueue({ type: XSS_TYPE, group: 'types-ui' });
      expect((await queue.waitFor(hostile.id, { timeoutMs: 20_000 })).state).toBe('failed');
      const row = (type: string) => page.locator(`#types-table tr[data-type="${type.replace(/["\\]/g, '\\$&')}"]`);
      try {
        await page.goto(`${base}/dashboard#/`);
        await row('relogger').waitFor();
        expect(Number(await row('relogger').locator('td').nth(2).textContent())).toBeGreaterThanOrEqual(1);
        // A hostile type is text in its cell, and its failed job is counted.
        expect(await row(XSS_TYPE).locator('td.type a').textContent()).toBe(XSS_TYPE);
        expect(Number(await row(XSS_TYPE).locator('td').nth(4).textContent())).toBeGreaterThanOrEqual(1);
        expect(await page.evaluate(`({ xss: window.__xss ?? null, csp: window.__csp, imgs: document.querySelectorAll('img').length })`)).toEqual({ xss: null, csp: [], imgs: 0 });

        acceptDialog = 'Pause type "relogger"?';
        await row('relogger').locator('button.pause-type').click();
        await row('relogger').locator('button.resume-type').waitFor();
        expect(acceptDialog).toBeNull();
        expect(await row('relogger').locator('td.type .tag').textContent()).toBe('paused');
        // The Paused card shows it at once, not a refresh later.
        expect(await page.locator('#paused-list li[data-kind="type"][data-name="relogger"]').count()).toBe(1);
        expect(await queue.listPaused()).toContainEqual({ type: 'relogger' });
        await page.screenshot({ path: join(shots, 'overview-types.png'), fullPage: true });

        await row('relogger').locator('button.resume-type').click();
        await row('relogger').locator('button.pause-type').waitFor();
        expect(await row('relogger').locator('td.type .tag').count()).toBe(0);
        expect(await queue.listPaused()).not.toContainEqual({ type: 'relogger' });

        await row('relogger').locator('td').nth(2).locator('a').click();
        await page.waitForURL(`**/dashboard#/jobs?type=relogger&state=ready`);
        await eventually('the ready job listed', async () => (await page.locator(`tr[data-id="${waiting.id}"]`).count()) === 1, 20_000, 100);
      } finally {
        acceptDialog = null;
        await queue.resume({ type: 'relogger' });
        await queue.cancel(waiting.id);
      }
    });

    it('says a hash names no page (an API path, a hostile link) as text, and offers the job it may have meant', async () => {
      await page.goto(`${base}/dashboard#/`);
      await page.locator('.count-card').first().waitFor();
      // The REST path of a job (/jobs/ID) typed as a dashboard hash: it used to show the overview.
      await page.evaluate(`location.hash = '#/jobs/42'`);
      await page.locator('#not-found').waitFor();
      expect(await page.title()).toBe('Not found · Job queue');
      expect(await page.locator('#not-found-hash').textContent()).toBe('#/jobs/42');
      expect(await page.locator('#not-found-job').getAttribute('href')).toBe('#/job/42');
      expect(await page.locator('.count-card').count()).toBe(0);
      await page.screenshot({ path: join(shots, 'not-found.png') });
      await page.goto(`${base}/dashboard#/${XSS_ERROR}`);
      await page.locator('#not-found').waitFor();
      expect(await page.locator('#not-found-hash').textContent()).toBe(`#/${XSS_ERROR}`);
      expect(await page.locator('#not-found-job').count()).toBe(0);
      const state = await page.evaluate(
        `({ xss: window.__xss ?? null, csp: window.__csp, imgs: document.querySelectorAll('img').length, scripts: document.querySelectorAll('script').length })`,
      );
      expect(state).toEqual({ xss: null, csp: [], imgs: 0, scripts: 1 });
      await page.locator('#not-found a[href="#/jobs"]').click();
      await page.locator('#f-args').waitFor(); // the jobs page's filter: there whether or not a job exists
      expect(await page.title()).toBe('Jobs · Job queue');
    });

    it("fits a phone's screen: no page scrolls sideways, wide tables scroll in their own box, no word broken", async () => {
      const tenant = 'phone-tenant';
      const res = await fetch(`${base}/pipelines`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tenant }) });
      const { reportId } = (await res.json()) as { reportId: number };
      const failed = await queue.enqueue({ type: 'flaky', group: tenant });
      await queue.waitFor(reportId, { timeoutMs: 30_000 });
      expect((await queue.waitFor(failed.id, { timeoutMs: 20_000 })).state).toBe('failed');
      await queue.schedule({ name: 'phone-schedule', cron: '0 0 1 1 *', type: 'aggregate', args: { tenant }, group: tenant });
      // A phone as Chromium emulates one: 360 CSS pixels wide, the page's meta viewport honoured.
      const phone = await browser.newContext({ viewport: { width: 360, height: 780 }, isMobile: true, hasTouch: true, httpCredentials: { username: 'ops', password: TOKEN } });
      const p = await phone.newPage();
      p.on('pageerror', (e) => problems.push(`phone pageerror: ${e.message}`));
      p.on('console', (m) => m.type() === 'error' && problems.push(`phone console: ${m.text()}`));
      try {
        const pages: Array<[string, string, string]> = [
          ['overview', '#/', '.count-card'],
          // A filter: the bulk actions show too.
          ['jobs', `#/jobs?${new URLSearchParams({ group: tenant })}`, '#jobs-table'],
          ['job', `#/job/${failed.id}`, '#job-error'],
          ['graph', `#/graph/${reportId}`, '#dag g.node'],
          ['schedules', `#/schedules?${new URLSearchParams({ group: tenant })}`, '#schedules-table'],
          ['not-found', '#/jobs/42', '#not-found'],
        ];
        for (const [name, hash, ready] of pages) {
          await p.goto(`${base}/dashboard${hash}`);
          await p.locator(ready).first().waitFor();
          await p.screenshot({ path: join(shots, `phone-${name}.png`), fullPage: true });
          expect([name, await p.evaluate(`[document.documentElement.scrollWidth, window.innerWidth]`)]).toEqual([name, [360, 360]]);
          if (name === 'job') {
            // A log line's message (here the failed attempt's stack) gets the card's width, not a third of it.
            const message = p.locator('#job-log-lines td.log-message').first();
            await message.waitFor();
            const [line, card] = [(await message.boundingBox())!, (await p.locator('#job-log').boundingBox())!];
            expect(line.width / card.width).toBeGreaterThan(0.8);
          }
          if (name !== 'jobs' && name !== 'schedules') continue;
          const table = name === 'jobs' ? '#jobs-table' : '#schedules-table';
          const layout = (await p.evaluate(`(() => {
            const box = document.querySelector('${table}').parentElement;
            // A word of a cell's first text (its own, or its link's) laid out over two lines; a break after a hyphen is fine.
            const splitsWord = (td) => {
              const text = td.firstChild.nodeType === 3 ? td.firstChild : td.firstChild.firstChild;
              return [...text.data.matchAll(/[^\\s-]+/g)].some((m) => {
                const r = document.createRange();
                r.setStart(text, m.index);
                r.setEnd(text, m.index + m[0].length);
                return r.getClientRects().length > 1;
              });
            };
            return {
              scrollsInItsBox: box.classList.contains('table-scroll') && box.scrollWidth > box.clientWidth,
              // A header wider than its column spills into the next one.
              spilledHeaders: [...document.querySelectorAll('${table} th')].filter((th) => th.scrollWidth > th.clientWidth).map((th) => th.textContent),
              // Types and groups split inside a word, as a column squeezed to a few characters does.
              brokenWords: [...document.querySelectorAll('${table} td.type, ${table} td:nth-child(${name === 'jobs' ? 4 : 5})')]
                .filter((td) => td.firstChild && splitsWord(td)).map((td) => td.textContent),
            };
          })()`)) as { scrollsInItsBox: boolean; spilledHeaders: string[]; brokenWords: string[] };
          expect([name, layout]).toEqual([name, { scrollsInItsBox: true, spilledHeaders: [], brokenWords: [] }]);
        }
        // The filter's fields stay inside their card, one column on a phone.
        const outside = await p.evaluate(`(() => {
          location.hash = '#/jobs';
          return new Promise((done) => setTimeout(() => {
            const form = document.querySelector('#jobs-filter').getBoundingClientRect();
            done([...document.querySelectorAll('#jobs-filter input, #jobs-filter select')]
              .filter((el) => { const r = el.getBoundingClientRect(); return r.left < form.left || r.right > form.right; })
              .map((el) => el.id));
          }, 500));
        })()`);
        expect(outside).toEqual([]);
        // A delayed job's Reschedule card: its date picker wraps under its label, inside the card.
        const delayed = await queue.enqueue({ type: 'step', group: tenant, runAfter: new Date(Date.now() + 3_600_000) });
        await p.goto(`${base}/dashboard#/job/${delayed.id}`);
        await p.locator('#reschedule-card').waitFor();
        expect(await p.evaluate(`[document.documentElement.scrollWidth, window.innerWidth]`)).toEqual([360, 360]);
        const spilled = await p.evaluate(`(() => {
          const card = document.querySelector('#reschedule-card').getBoundingClientRect();
          return [...document.querySelectorAll('#reschedule-card input, #reschedule-card button')]
            .filter((el) => { const r = el.getBoundingClientRect(); return r.left < card.left || r.right > card.right; })
            .map((el) => el.id);
        })()`);
        expect(spilled).toEqual([]);
        await p.screenshot({ path: join(shots, 'phone-reschedule.png'), fullPage: true });
        await queue.cancel(delayed.id);
      } finally {
        await phone.close();
        await queue.unschedule('phone-schedule');
      }
    });

    it.each(['dark', 'light'] as const)('follows a %s system theme with readable text on every page (contrast 4.5:1 or more)', async (scheme) => {
      const group = `${scheme}-theme`;
      const failed = await queue.enqueue({ type: 'flaky', group, args: { note: scheme } });
      expect((await queue.waitFor(failed.id, { timeoutMs: 20_000 })).state).toBe('failed');
      await queue.pause({ group });
      // A schedule() row and a declared @Recurring one: every kind of cell, tag and button.
      const schedules = [`${scheme}-theme-runtime`, `${scheme}-theme-declared`];
      for (const name of schedules) await queue.schedule({ name, cron: '0 0 1 1 *', type: 'step', group });
      const jq = app.get(JobQueueDatabase);
      await jq.run(sql`UPDATE job_queue_schedules SET declared_until = ${jq.dialect.timeParam(new Date(Date.now() + 600_000))} WHERE name = ${schedules[1]}`);
      const themed = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: scheme, httpCredentials: { username: 'ops', password: TOKEN } });
      const p = await themed.newPage();
      p.on('pageerror', (e) => problems.push(`${scheme} pageerror: ${e.message}`));
      p.on('console', (m) => m.type() === 'error' && problems.push(`${scheme} console: ${m.text()}`));
      // WCAG's contrast of each element's text against the first opaque background behind it.
      const worst = (selectors: string) =>
        p.evaluate(`(() => {
          const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
          const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
          const behind = (el) => { for (let e = el; e; e = e.parentElement) { const v = rgb(getComputedStyle(e).backgroundColor); if (v.length < 4 || v[3] > 0) return v; } return [255, 255, 255]; };
          const out = [];
          for (const el of document.querySelectorAll(${JSON.stringify(selectors)})) {
            if (!el.textContent.trim() && el.tagName !== 'INPUT') continue;
            const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(behind(el))];
            out.push([Math.round(((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) * 100) / 100, el.tagName + '.' + el.className + ' ' + el.textContent.trim().slice(0, 30)]);
          }
          out.sort((x, y) => x[0] - y[0]);
          return { n: out.length, worst: out.slice(0, 3), page: lum(behind(document.body)) };
        })()`) as Promise<{ n: number; worst: Array<[number, string]>; page: number }>;
      try {
        // [page, hash, what shows it has drawn, the text to check]
        const pages: Array<[string, string, string, string]> = [
          ['overview', '#/', '#paused-list li', 'h1, h2, .count-n, .count-label, .facts dt, .facts dd, #paused-list a, #paused-list .muted, .pause-form input, .pause-form button, .muted, .status, #types-table th, #types-table td, #types-table a, #types-table .tag, #types-table button, #groups-table th, #groups-table td'],
          ['jobs', `#/jobs?${new URLSearchParams({ group })}`, '#jobs-table', 'label span, input, select, button, #jobs-table th, #jobs-table td, #jobs-table a, .cell-args div, .cell-error div'],
          ['job', `#/job/${failed.id}`, '#job-log-lines td.log-message', 'h1, h2, dt, dd, pre.code, #job-log-lines td, button, .muted'],
          ['graph', `#/graph/${failed.id}`, '#dag g.node', 'h1, #graph-info, .button, button'],
          ['schedules', `#/schedules?${new URLSearchParams({ group })}`, '#schedules-table', 'h1, label span, input, button, #schedule-count, #schedules-table th, #schedules-table td, #schedules-table a, .tag'],
        ];
        for (const [name, hash, drawn, selectors] of pages) {
          await p.goto(`${base}/dashboard${hash}`);
          await p.locator(drawn).first().waitFor();
          const r = await worst(selectors);
          // A dark page or a light one, and text was found.
          expect([name, scheme === 'dark' ? r.page < 0.05 : r.page > 0.8, r.n > 3]).toEqual([name, true, true]);
          expect([name, r.worst[0][0] >= 4.5 ? 'readable' : r.worst]).toEqual([name, 'readable']);
          await p.screenshot({ path: join(shots, `${scheme}-${name}.png`) });
        }
      } finally {
        await themed.close();
        await queue.resume({ group });
        for (const name of schedules) await queue.unschedule(name);
      }
    });

    it('gives a denied request no page and no data', async () => {
      const wrong = { authorization: `Basic ${Buffer.from('ops:wrong-password').toString('base64')}` };
      for (const extraHTTPHeaders of [undefined, wrong]) {
        const denied = await browser.newContext({ extraHTTPHeaders });
        const p = await denied.newPage();
        // Chromium answers the Basic challenge it cannot meet by abandoning the navigation.
        const res = await p.goto(`${base}/dashboard`).catch((err: Error) => err);
        if (res instanceof Error) expect(res.message).toContain('ERR_INVALID_AUTH_CREDENTIALS');
        else expect(res!.status()).toBe(401);
        const body = res instanceof Error ? '' : await res!.text();
        expect(body).not.toContain('jq-csrf');
        expect(body).not.toContain('acme');
        for (const path of ['api/overview', 'api/jobs', 'api/jobs/1', 'assets/app.js']) {
          const r = await p.request.get(`${base}/dashboard/${path}`);
          expect([path, r.status()]).toEqual([path, 401]);
          expect(await r.text()).not.toContain('acme');
        }
        await denied.close();
      }
    });
  },
  ['sqlite', 'postgres'],
);

function skipDialects(title: string): void {
  describe.skip(title, () => it('needs chromium', () => undefined));
}

async function bootSampleApp(databaseUrl: string): Promise<INestApplication> {
  const saved = { DATABASE_URL: process.env.DATABASE_URL, SAMPLE_DEMO: process.env.SAMPLE_DEMO, DASHBOARD_TOKEN: process.env.DASHBOARD_TOKEN };
  Object.assign(process.env, { DATABASE_URL: databaseUrl, SAMPLE_DEMO: '0', DASHBOARD_TOKEN: TOKEN });
  try {
    const module = await Test.createTestingModule({ imports: [AppModule], providers: [BrowserSpecHandlers] }).compile();
    const app = module.createNestApplication({ logger: ['error', 'warn'] });
    await app.listen(0, '127.0.0.1');
    return app;
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
}

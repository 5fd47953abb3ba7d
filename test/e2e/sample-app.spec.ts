import { jest } from '@jest/globals';
import { Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { AppModule } from '../../sample-app/app.module';
import { describeDialects } from '../support/describe-dialects';
import { isFinished, SampleAppClient } from './sample-app.client';

type Ids = Record<string, number>;

/**
 * The sample app end to end, once per dialect: its own AppModule, configured through the same
 * DATABASE_URL it reads in production, driven over real HTTP.
 */
describeDialects('sample app over HTTP', (db) => {
  let app: INestApplication;
  let http: SampleAppClient;
  // The FailedJobsLogger's lines (Logger 'Jobs'), for the observability test at the end.
  const warned: string[] = [];
  let warn: ReturnType<typeof jest.spyOn> | undefined;
  beforeAll(() => {
    const original = Logger.prototype.warn;
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(function (this: Logger, message: unknown, ...rest: unknown[]) {
      if ((this as unknown as { context?: string }).context === 'Jobs') warned.push(String(message));
      else original.call(this, message, ...(rest as []));
    });
  });
  afterAll(() => warn?.mockRestore());

  beforeAll(async () => {
    app = await bootSampleApp(db.dialect === 'sqlite' ? `sqlite:${db.location}` : db.location);
    const { port } = app.getHttpServer().address() as AddressInfo;
    http = new SampleAppClient(`http://127.0.0.1:${port}`);
  });
  afterAll(() => app?.close());

  it('runs two tenants’ report pipelines to the end, results flowing through upstream', async () => {
    const acme = await http.post('/pipelines', { tenant: 'acme' });
    const globex = await http.post('/pipelines', { tenant: 'globex', sources: ['crm', 'web'] });
    expect(acme.status).toBe(201);
    expect(globex.status).toBe(201);
    const refs = ['report', 'fetch:crm', 'fetch:billing', 'fetch:support', 'parse:crm', 'parse:billing', 'parse:support', 'aggregate', 'render', 'notify'];
    expect(Object.keys(acme.body.jobs).sort()).toEqual([...refs].sort());
    expect(acme.body).toMatchObject({ tenant: 'acme', reportId: acme.body.jobs.report });

    // Watch acme's render while waiting, to see progress reported mid-run.
    const renderSeen: Array<{ state: string; progress: number; stage: string | null }> = [];
    const watchRender = http.until<any>(acme.body.jobs.render, isFinished, (j) => renderSeen.push(j));
    const [acmeReport, globexReport] = await Promise.all([
      http.until(acme.body.reportId, isFinished),
      http.until(globex.body.reportId, isFinished),
    ]);
    await watchRender;
    expect(acmeReport).toMatchObject({ state: 'done', isContainer: true, group: 'acme', type: 'report' });
    expect(globexReport).toMatchObject({ state: 'done', isContainer: true, group: 'globex' });

    const a = await jobsOf(acme.body.jobs);
    const g = await jobsOf(globex.body.jobs);
    for (const job of Object.values(a)) expect(job).toMatchObject({ state: 'done', group: 'acme' });
    for (const job of Object.values(g)) expect(job).toMatchObject({ state: 'done', group: 'globex' });

    // fetch → parse → aggregate: every sum is the sum of what came from upstream.
    for (const source of ['crm', 'billing', 'support']) {
      const rows: number[] = a[`fetch:${source}`].result.rows;
      expect(a[`parse:${source}`].result).toEqual({ source, count: rows.length, total: rows.reduce((x, y) => x + y, 0) });
    }
    const parses = ['crm', 'billing', 'support'].map((s) => a[`parse:${s}`].result);
    expect(a.aggregate.result).toEqual({
      tenant: 'acme',
      count: 15,
      total: parses.reduce((n, p) => n + p.total, 0),
      bySource: Object.fromEntries(parses.map((p) => [p.source, p.total])),
    });
    expect(g.aggregate.result).toMatchObject({ tenant: 'globex', count: 10, total: g['parse:crm'].result.total + g['parse:web'].result.total });

    // The flaky source failed once and succeeded on the retry; the others ran once.
    expect(a['fetch:billing']).toMatchObject({ attempts: 2, maxAttempts: 3 });
    expect(a['fetch:billing'].error).toMatch(/billing API timed out/);
    expect(a['fetch:crm']).toMatchObject({ attempts: 1, snoozes: 0, error: null });
    // The export source snoozed once while its export was prepared: no attempt spent, both runs attempt 1.
    expect(a['fetch:support']).toMatchObject({ attempts: 1, snoozes: 1, error: null });
    expect((await http.get(`/jobs/${a['fetch:support'].id}/logs`)).body.logs.map((l: { attempt: number; message: string }) => [l.attempt, l.message])).toEqual([
      [1, 'calling the support API for acme (attempt 1 of 3)'],
      [1, 'support is preparing the export; snoozing 800 ms'],
      [1, 'calling the support API for acme (attempt 1 of 3)'],
      [1, `support answered ${rowsOf(a['fetch:support'])} rows`],
    ]);
    // Its log (GET /jobs/:id/logs): both attempts' lines and the first one's error, in the order written.
    const log = await http.get(`/jobs/${a['fetch:billing'].id}/logs`);
    expect(log.status).toBe(200);
    expect(log.body.nextCursor).toBeNull();
    const timedOut = 'Error: billing API timed out (simulated; fails on the first attempt only)';
    expect(log.body.logs.map((l: { attempt: number; level: string; message: string }) => [l.attempt, l.level, l.message.split('\n')[0]])).toEqual([
      [1, 'info', 'calling the billing API for acme (attempt 1 of 3)'],
      [1, 'error', timedOut],
      [2, 'info', 'calling the billing API for acme (attempt 2 of 3)'],
      [2, 'info', `billing answered ${rowsOf(a['fetch:billing'])} rows`],
    ]);
    expect(Date.parse(log.body.logs[0].at)).toBeLessThanOrEqual(Date.parse(log.body.logs[2].at));
    // The error history alone (?level=error): one line per failed attempt.
    const errors = await http.get(`/jobs/${a['fetch:billing'].id}/logs?level=error`);
    expect(errors.body.logs.map((l: { attempt: number; message: string }) => [l.attempt, l.message.split('\n')[0]])).toEqual([[1, timedOut]]);
    const attempt2 = await http.get(`/jobs/${a['fetch:billing'].id}/logs?attempt=2&limit=1`);
    expect(attempt2.body.logs).toHaveLength(1);
    const rest = await http.get(`/jobs/${a['fetch:billing'].id}/logs?attempt=2&limit=1&cursor=${attempt2.body.nextCursor}`);
    expect(rest.body).toMatchObject({ logs: [{ attempt: 2, message: expect.stringMatching(/answered/) }], nextCursor: null });
    expect((await http.get(`/jobs/${a.render.id}/logs`)).body.logs.map((l: { message: string }) => l.message)).toEqual(['rendering layout', 'rendering charts', 'rendering tables', 'rendering pdf']);

    // render reported its stages and ended at 100; notify carried render's and aggregate's results.
    expect(renderSeen.some((j) => j.state === 'running' && ['layout', 'charts', 'tables', 'pdf'].includes(j.stage!))).toBe(true);
    expect(a.render).toMatchObject({ progress: 100, stage: 'rendered', result: { url: `/reports/acme/${a.render.id}.pdf`, total: a.aggregate.result.total } });
    expect(a.notify.result).toEqual({ to: 'reports@acme.example', url: a.render.result.url, total: a.aggregate.result.total });
    expect(g.notify.result).toMatchObject({ to: 'reports@globex.example', total: g.aggregate.result.total });

    const stats = await http.get('/stats');
    const total = Object.keys(acme.body.jobs).length + Object.keys(globex.body.jobs).length;
    expect(stats.status).toBe(200);
    expect(stats.body.byState).toEqual({ waiting: 0, ready: 0, leased: 0, running: 0, done: total, failed: 0, cancelled: 0 });
    expect(stats.body).toMatchObject({ running: 0, groups: [], recent: { failed: 0, failureRate: 0 } });
    // Containers finish too, but never start: every row is counted once as done.
    expect(stats.body.recent.done).toBe(total);
  });

  it('answers 400 with the reason for bad bodies and ids, and 404 for unknown jobs', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [{}, /"tenant" must be/],
      [{ tenant: '' }, /"tenant" must be/],
      [{ tenant: 'a b' }, /"tenant" must be .* received "a b"/],
      [{ tenant: 42 }, /"tenant" must be .* received 42/],
      [{ tenant: 'acme', sources: 'crm' }, /"sources" must be an array/],
      [{ tenant: 'acme', sources: [] }, /"sources" must be an array of 1 to 10/],
      [{ tenant: 'acme', sources: ['crm', 7] }, /Each of "sources"/],
      [{ tenant: 'acme', sources: ['crm', 'crm'] }, /must not repeat/],
      [{ tenant: 'acme', colour: 'red' }, /Unknown field\(s\) "colour"/],
      [[{ tenant: 'acme' }], /Body must be a JSON object/],
      [undefined, /Body must be a JSON object/],
    ];
    for (const [body, message] of bad) {
      const reply = await http.post('/pipelines', body);
      expect({ body, status: reply.status }).toEqual({ body, status: 400 });
      expect(reply.body.message).toMatch(message);
    }
    expect((await http.post('/pipelines', '{"tenant": ')).status).toBe(400); // malformed JSON

    expect(await http.get('/jobs/987654')).toMatchObject({ status: 404, body: { message: expect.stringMatching(/Job 987654 does not exist/) } });
    for (const path of ['/jobs/987654/cancel', '/jobs/987654/retry']) {
      expect(await http.post(path)).toMatchObject({ status: 404, body: { error: 'JOB_NOT_FOUND' } });
    }
    for (const id of ['abc', '0', '-3', '1.5']) {
      expect(await http.get(`/jobs/${id}`)).toMatchObject({ status: 400, body: { message: expect.stringMatching(/positive integer/) } });
    }
    expect(await http.get('/jobs/987654/logs')).toMatchObject({ status: 404, body: { error: 'JOB_NOT_FOUND' } });
    for (const query of ['limit=0', 'limit=5000', 'limit=x', 'attempt=0', 'colour=red', 'cursor=forged', 'level=warn', 'level=error&level=info']) {
      expect({ query, status: (await http.get(`/jobs/1/logs?${query}`)).status }).toEqual({ query, status: 400 });
    }
    expect((await http.get('/stats')).body.byState.waiting).toBe(0); // nothing was enqueued by the bad requests
  });

  it('cancels a fresh pipeline as a whole, retries it to the end, and refuses to retry a finished job (409)', async () => {
    const { body } = await http.post('/pipelines', { tenant: 'initech', sources: ['crm', 'billing'] });
    const ids: Ids = body.jobs;
    const cancelled = await http.post(`/jobs/${ids.report}/cancel`);
    expect(cancelled).toMatchObject({ status: 200, body: { state: 'cancelled', error: 'cancelled' } });
    for (const job of Object.values(await jobsOf(ids))) expect(job.state).toBe('cancelled');

    const retried = await http.post(`/jobs/${ids.report}/retry`);
    expect(retried).toMatchObject({ status: 200, body: { state: 'waiting', error: null } });
    expect(await http.until(ids.report, isFinished)).toMatchObject({ state: 'done' });
    const jobs = await jobsOf(ids);
    for (const job of Object.values(jobs)) expect(job.state).toBe('done');
    expect(jobs['fetch:billing'].attempts).toBe(2); // attempts start over on retry, so it was flaky again

    const refused = await http.post(`/jobs/${ids.notify}/retry`);
    expect(refused).toMatchObject({ status: 409, body: { error: 'INVALID_JOB_STATE', message: expect.stringMatching(/it is done/) } });
    // Cancelling a finished job changes nothing.
    expect(await http.post(`/jobs/${ids.report}/cancel`)).toMatchObject({ status: 200, body: { state: 'done' } });
  });

  it('cancels a running render, which cancels notify and fails the report, and retry revives the three', async () => {
    const { body } = await http.post('/pipelines', { tenant: 'hooli', sources: ['crm'] });
    const ids: Ids = body.jobs;
    await http.until(ids.render, (j) => j.state === 'running' && j.progress > 0);
    expect(await http.post(`/jobs/${ids.render}/cancel`)).toMatchObject({ status: 200, body: { state: 'cancelled' } });
    // A container whose child ends cancelled rolls up failed.
    expect(await http.until(ids.report, isFinished)).toMatchObject({ state: 'failed' });
    expect((await http.get(`/jobs/${ids.notify}`)).body).toMatchObject({ state: 'cancelled', error: expect.stringMatching(/upstream job/) });
    // The aborted render stored nothing.
    expect((await http.get(`/jobs/${ids.render}`)).body).toMatchObject({ state: 'cancelled', result: null });

    expect(await http.post(`/jobs/${ids.render}/retry`)).toMatchObject({ status: 200 });
    expect(await http.until(ids.report, isFinished)).toMatchObject({ state: 'done' });
    expect((await http.get(`/jobs/${ids.notify}`)).body).toMatchObject({ state: 'done', result: { to: 'reports@hooli.example' } });
  });

  it('GET /jobs finds by state, type, group and args (JSON), pages by cursor; POST /pause and /resume; 400 on bad input', async () => {
    const { body } = await http.post('/pipelines', { tenant: 'tyrell', sources: ['crm'] });
    await http.until(body.reportId, isFinished);
    const page = await http.get(`/jobs?group=tyrell&type=fetch,parse&state=done&args=${encodeURIComponent('{"source":"crm","tenant":"tyrell"}')}`);
    expect(page.status).toBe(200);
    expect(page.body.jobs.map((j: { id: number }) => j.id)).toEqual([body.jobs['fetch:crm']]); // parse's args have no tenant
    const all: number[] = [];
    let cursor: string | null = null;
    do {
      const next: { status: number; body: { jobs: Array<{ id: number }>; nextCursor: string | null } } = await http.get(
        `/jobs?group=tyrell&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(next.status).toBe(200);
      all.push(...next.body.jobs.map((j) => j.id));
      cursor = next.body.nextCursor;
    } while (cursor);
    expect(all).toEqual(Object.values(body.jobs as Ids).sort((a, b) => b - a));
    for (const bad of ['state=finished', 'limit=0', 'limit=10000', 'args=%7Bnot-json', 'args=%5B1%5D', 'cursor=forged', 'colour=red']) {
      const r = await http.get(`/jobs?${bad}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
    }

    expect(await http.post('/pause', { group: 'soylent' })).toMatchObject({ status: 200, body: { paused: [{ group: 'soylent' }] } });
    const held = await http.post('/pipelines', { tenant: 'soylent', sources: ['crm'] });
    await new Promise((r) => setTimeout(r, 1_500)); // more than a poll interval: nothing of soylent runs
    expect((await http.get(`/jobs/${held.body.jobs['fetch:crm']}`)).body.state).toBe('ready');
    expect(await http.post('/pause', {})).toMatchObject({ status: 400, body: { error: 'INVALID_PAUSE_TARGET' } });
    expect((await http.post('/resume', { type: 'x', group: 'y' })).status).toBe(400);
    await http.post('/pause', { group: 'initrode' });
    const first = await http.get('/paused?kind=group&limit=1');
    expect(first).toMatchObject({ status: 200, body: { paused: [{ group: 'initrode' }], nextCursor: expect.any(String) } });
    expect(new Date(first.body.paused[0].pausedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(await http.get(`/paused?kind=group&limit=1&cursor=${first.body.nextCursor}`)).toMatchObject({ status: 200, body: { paused: [{ group: 'soylent' }], nextCursor: null } });
    for (const bad of ['kind=tenant', 'limit=0', 'limit=many', 'cursor=forged', 'colour=red']) {
      const r = await http.get(`/paused?${bad}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
    }
    expect(await http.post('/resume', { group: 'initrode' })).toMatchObject({ status: 200, body: { paused: [{ group: 'soylent' }] } });
    expect(await http.post('/resume', { group: 'soylent' })).toMatchObject({ status: 200, body: { paused: [], nextCursor: null } });
    expect(await http.until(held.body.reportId, isFinished)).toMatchObject({ state: 'done' });
  });

  it('serves /metrics and /health, and logs jobs that failed for good from @OnJobEvent(failed)', async () => {
    const metrics = await fetch(`${http.base}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toMatch(/^job_queue_jobs_completed_total\{type="render"\} \d+$/m);
    expect(text).toMatch(/^job_queue_jobs\{state="done"\} \d+$/m);
    expect(text).toMatch(/^job_queue_oldest_ready_age_seconds \d/m);
    expect(text).toMatch(/^job_queue_schedules_failing \d+$/m);
    const health = await fetch(`${http.base}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ details: { jobQueue: { status: 'up', worker: true } } });
    // The hooli report rolled up failed when its render was cancelled (test above).
    expect(warned.some((line) => /^job \d+ \(report, group hooli\) failed for good/.test(line))).toBe(true);
  });

  async function jobsOf(ids: Ids): Promise<Record<string, any>> {
    const entries = await Promise.all(Object.entries(ids).map(async ([ref, id]) => [ref, (await http.get(`/jobs/${id}`)).body] as const));
    return Object.fromEntries(entries);
  }
});

/** Boots AppModule as main.ts does, minus the demo, on an ephemeral port. */
async function bootSampleApp(databaseUrl: string): Promise<INestApplication> {
  const saved = { DATABASE_URL: process.env.DATABASE_URL, SAMPLE_DEMO: process.env.SAMPLE_DEMO };
  Object.assign(process.env, { DATABASE_URL: databaseUrl, SAMPLE_DEMO: '0' });
  try {
    const module = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = module.createNestApplication({ logger: ['error', 'warn'] });
    await app.listen(0, '127.0.0.1');
    return app;
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
}

/** Rows a fetch job's result holds. */
function rowsOf(job: { result: { rows: number[] } }): number {
  return job.result.rows.length;
}

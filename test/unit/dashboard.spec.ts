import { DASHBOARD_OPTIONS } from '../../lib/dashboard/dashboard.constants';
import { boundHead, boundJson, boundText, codePoints, TRUNCATION_MARKER } from '../../lib/dashboard/bounded-text';
import { checkSameOrigin } from '../../lib/dashboard/dashboard-action.guard';
import { dashboardPage, escapeHtml, requestBase } from '../../lib/dashboard/dashboard-page';
import { parseJobsQuery, parseLogsQuery, parseRescheduleBody, parseSchedulesQuery } from '../../lib/dashboard/dashboard-query';
import { normalizeDashboardPath, resolveDashboardOptions } from '../../lib/dashboard/dashboard.options';
import { SharedSnapshots } from '../../lib/dashboard/shared-snapshot';
import {
  basicAuth,
  DashboardAuthRequiredError,
  DashboardCsrfError,
  InvalidDashboardOptionsError,
  JobQueueDashboardModule,
} from '../../lib/dashboard';
import { InvalidQueryError } from '../../lib';

describe('dashboard options', () => {
  it('requires an explicit auth decision', () => {
    expect(() => resolveDashboardOptions({})).toThrow(DashboardAuthRequiredError);
    expect(() => resolveDashboardOptions(undefined)).toThrow(DashboardAuthRequiredError);
    expect(() => resolveDashboardOptions({ auth: true })).toThrow(/"auth" must be a function .* or the string 'public'/);
    expect(() => JobQueueDashboardModule.forRoot({} as never)).toThrow(DashboardAuthRequiredError);
    expect(resolveDashboardOptions({ auth: 'public' })).toMatchObject({ auth: null, path: 'queue', readOnly: false, snapshotTtlMs: 1000 });
    const auth = () => true;
    expect(resolveDashboardOptions({ auth, path: '/ops/queue/', readOnly: true })).toMatchObject({ auth, path: 'ops/queue', readOnly: true });
  });

  it('forRootAsync fails at start-up when the factory gives no auth', async () => {
    const mod = JobQueueDashboardModule.forRootAsync({ useFactory: () => ({}) as never });
    const provider = (mod.providers as Array<{ provide?: unknown; useFactory?: () => Promise<unknown> }>).find((p) => p.provide === DASHBOARD_OPTIONS)!;
    await expect(provider.useFactory!()).rejects.toThrow(DashboardAuthRequiredError);
  });

  it('refuses unknown options, bad paths and bad flags', () => {
    expect(() => resolveDashboardOptions({ auth: 'public', readonly: true })).toThrow(InvalidDashboardOptionsError);
    expect(() => resolveDashboardOptions({ auth: 'public', readOnly: 'yes' })).toThrow(/readOnly/);
    for (const bad of ['', '/', '../x', 'a/../b', 'a b', 'x?y', '<script>', 5]) expect(() => normalizeDashboardPath(bad)).toThrow(InvalidDashboardOptionsError);
    expect(normalizeDashboardPath('/dashboard')).toBe('dashboard');
  });
});

describe('dashboard query parsing', () => {
  it('maps the query string onto a find() filter', () => {
    expect(parseJobsQuery({ state: 'failed,cancelled', type: 't', group: 'g', args: '{"a":1}', error: 'x', after: '2026-01-01', parent: '7', worker: 'host:1:ab', schedule: 'nightly', limit: '20', cursor: 'c' })).toEqual({
      filter: { state: ['failed', 'cancelled'], type: 't', group: 'g', argsContains: { a: 1 }, errorContains: 'x', createdAfter: '2026-01-01', parentId: 7, worker: 'host:1:ab', schedule: 'nightly' },
      limit: 20,
      cursor: 'c',
    });
    expect(parseJobsQuery({ state: '', type: '' })).toEqual({ filter: {}, limit: 50, cursor: null });
  });

  it('maps the schedules query string onto a findSchedules() filter, the last run as a comma list', () => {
    expect(parseSchedulesQuery({ name: 'n', type: 't', group: 'g', lastRun: 'failed, cancelled', limit: '10', cursor: 'c' })).toEqual({
      filter: { name: 'n', type: 't', group: 'g', lastRunState: ['failed', 'cancelled'] },
      limit: 10,
      cursor: 'c',
    });
    expect(parseSchedulesQuery({ lastRun: '' })).toEqual({ filter: {}, limit: 50, cursor: null });
    // Left for findSchedules to refuse (400): no state in it.
    expect(parseSchedulesQuery({ lastRun: ',' }).filter).toEqual({ lastRunState: [] });
    expect(() => parseSchedulesQuery({ lastRun: ['failed', 'done'] })).toThrow(/a single string/);
  });

  it('answers typed errors for bad input', () => {
    expect(() => parseJobsQuery({ args: '{nope' })).toThrow(InvalidQueryError);
    expect(() => parseJobsQuery({ args: 'x'.repeat(5000) })).toThrow(/at most 4096/);
    expect(() => parseJobsQuery({ limit: '101' })).toThrow(InvalidQueryError);
    expect(() => parseJobsQuery({ limit: '1e3' })).toThrow(InvalidQueryError);
    expect(() => parseJobsQuery({ type: ['a', 'b'] })).toThrow(/a single string/);
    expect(() => parseJobsQuery({ parent: '0' })).toThrow(InvalidQueryError);
    expect(() => parseJobsQuery({ schedule: ['a', 'b'] })).toThrow(/a single string/);
  });

  it("maps the job log's query string onto getLogs' query, 200 lines at most", () => {
    expect(parseLogsQuery({})).toEqual({ limit: 200 });
    expect(parseLogsQuery({ attempt: '2', limit: '20', cursor: 'c', unknown: 'x' })).toEqual({ attempt: 2, limit: 20, cursor: 'c' });
    expect(parseLogsQuery({ attempt: '', cursor: '' })).toEqual({ limit: 200 });
    expect(parseLogsQuery({ level: 'error' })).toEqual({ level: 'error', limit: 200 });
    for (const bad of [{ limit: '201' }, { limit: '0' }, { attempt: '0' }, { attempt: '-1' }, { attempt: '1.5' }, { cursor: ['a', 'b'] }, { attempt: ['1', '2'] }, { level: 'warn' }, { level: ['error'] }]) {
      expect(() => parseLogsQuery(bad)).toThrow(InvalidQueryError);
    }
  });
});

describe('reschedule body', () => {
  it("turns runAfter's ISO text with its zone into a Date and passes the rest to reschedule()'s own check", () => {
    expect(parseRescheduleBody({ runAfter: '2027-01-15T09:30:00+01:00', priority: 9 })).toEqual({ runAfter: new Date('2027-01-15T08:30:00Z'), priority: 9 });
    expect(parseRescheduleBody({ runAfter: '2027-01-15T08:30:00.123Z' })).toEqual({ runAfter: new Date('2027-01-15T08:30:00.123Z') });
    expect(parseRescheduleBody({ runAfter: '2028-02-29T23:59-05:00' })).toEqual({ runAfter: new Date('2028-03-01T04:59:00Z') }); // a leap day, no seconds
    expect(parseRescheduleBody({ priority: -1, extra: true })).toEqual({ priority: -1, extra: true }); // reschedule() refuses these
    // A bulk action's body: its filter is read apart, the rest is the change.
    expect(parseRescheduleBody({ filter: { group: 'acme' }, priority: 5 }, ['filter'])).toEqual({ priority: 5 });
    expect(parseRescheduleBody({ filter: { group: 'acme' } }, ['filter'])).toEqual({});
  });

  it.each([[null], [[]], ['{}'], [{ runAfter: '2027-01-15T09:30:00' }], [{ runAfter: '2027-01-15' }], [{ runAfter: '2027-02-30T09:30:00Z' }], [{ runAfter: '2027-02-29T09:30:00Z' }], [{ runAfter: '2027-01-15T24:00:00Z' }], [{ runAfter: 1_800_000_000_000 }], [{ runAfter: null }]])(
    'refuses %j with InvalidQueryError',
    (body) => {
      expect(() => parseRescheduleBody(body)).toThrow(InvalidQueryError);
    },
  );
});

describe('bounded text', () => {
  it('cuts long values and says so', () => {
    expect(boundText('abc', 3)).toEqual({ text: 'abc', truncated: false, length: 3 });
    expect(boundText('abcdef', 3)).toEqual({ text: 'abc' + TRUNCATION_MARKER, truncated: true, length: 6 });
    const big = boundJson({ blob: 'x'.repeat(1_000_000) }, 1000);
    expect(big.truncated).toBe(true);
    expect(big.text.length).toBeLessThan(1100);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(boundJson(cyclic, 100).text).toBe('[object Object]');
  });

  it('counts characters (code points) whether cut or not, and never cuts a surrogate pair', () => {
    // Cut or not, a cell, a job field and a row read by SQL agree: an emoji is one character.
    expect(boundText('😀😀', 2)).toEqual({ text: '😀😀', truncated: false, length: 2 });
    expect(boundText('😀😀😀', 2)).toEqual({ text: '😀😀' + TRUNCATION_MARKER, truncated: true, length: 3 });
    expect(boundText('a😀b', 2)).toEqual({ text: 'a😀' + TRUNCATION_MARKER, truncated: true, length: 3 });
    expect(boundHead('😀😀', 2, 2)).toEqual({ text: '😀😀', truncated: false, length: 2 });
    expect(boundHead('😀😀😀', 1_000_000, 2)).toEqual({ text: '😀😀' + TRUNCATION_MARKER, truncated: true, length: 1_000_000 });
    // A lone surrogate (stored texts never hold one, but a value may) counts one and stays whole.
    expect(boundText('\ud800x', 1)).toEqual({ text: '\ud800' + TRUNCATION_MARKER, truncated: true, length: 2 });
    expect(codePoints('😀'.repeat(1_000) + 'é')).toBe(1_001);
    // A megabyte of emoji is counted in one pass and cut at its 1,000th character.
    const big = boundText('😀'.repeat(512 * 1024), 1_000);
    expect([big.length, Array.from(big.text.slice(0, -TRUNCATION_MARKER.length)).length]).toEqual([512 * 1024, 1_000]);
  });
});

describe('shared snapshots', () => {
  it('runs one computation per key and interval, whoever asks', async () => {
    let t = 0;
    let runs = 0;
    const snaps = new SharedSnapshots<number>(1000, 2, () => t);
    const compute = async () => ++runs;
    const all = await Promise.all(Array.from({ length: 50 }, () => snaps.get('k', compute)));
    expect(all.every((v) => v === 1)).toBe(true);
    t = 999;
    expect(await snaps.get('k', compute)).toBe(1);
    t = 1000;
    expect(await snaps.get('k', compute)).toBe(2);
    await snaps.get('a', compute);
    await snaps.get('b', compute);
    t = 1001;
    expect(await snaps.get('k', compute)).toBe(5); // evicted: at most 2 keys kept
  });

  it('does not keep a failure', async () => {
    const snaps = new SharedSnapshots<number>(10_000);
    await expect(snaps.get('k', () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    await new Promise((r) => setImmediate(r));
    expect(await snaps.get('k', async () => 7)).toBe(7);
  });
});

describe('CSRF origin check', () => {
  const req = (headers: Record<string, string>) => ({ headers });
  it('accepts same origin and requests without Origin, refuses others', () => {
    expect(() => checkSameOrigin(req({ host: 'app:3000', origin: 'http://app:3000' }))).not.toThrow();
    expect(() => checkSameOrigin(req({ host: 'app:3000' }))).not.toThrow();
    expect(() => checkSameOrigin(req({ host: 'app:3000', origin: 'http://evil:3000' }))).toThrow(DashboardCsrfError);
    expect(() => checkSameOrigin(req({ host: 'app:3000', origin: 'null' }))).toThrow(DashboardCsrfError);
    expect(() => checkSameOrigin(req({ host: 'app:3000', 'sec-fetch-site': 'same-site' }))).toThrow(DashboardCsrfError);
  });
});

describe('dashboard page', () => {
  it('escapes the base and carries no data', () => {
    expect(escapeHtml(`<"'&>`)).toBe('&lt;&quot;&#39;&amp;&gt;');
    expect(requestBase('/admin/queue/?x=<b>')).toBe('/admin/queue');
    const html = dashboardPage('/q"><script>', 'tok', false);
    expect(html).toContain('content="/q&quot;&gt;&lt;script&gt;"');
    expect(html).not.toContain('"><script>');
  });
});

describe('basicAuth', () => {
  const header = (user: string, pass: string) => ({ headers: { authorization: 'Basic ' + Buffer.from(`${user}:${pass}`).toString('base64') } });
  it('checks the password (and the user name when given)', () => {
    const auth = basicAuth({ password: 's3cret-token' }) as (req: unknown) => boolean;
    expect(auth(header('anyone', 's3cret-token'))).toBe(true);
    expect(auth(header('anyone', 'wrong'))).toBe(false);
    expect(auth({ headers: {} })).toBe(false);
    const named = basicAuth({ username: 'ops', password: 's3cret-token' }) as (req: unknown) => boolean;
    expect(named(header('ops', 's3cret-token'))).toBe(true);
    expect(named(header('dev', 's3cret-token'))).toBe(false);
    expect(() => basicAuth({ password: 'short' })).toThrow(/at least 8/);
  });
});

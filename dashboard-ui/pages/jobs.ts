import { api, READ_ONLY, STATES, type JobRow } from '../api';
import { CursorPages } from '../cursor-pages';
import { h, replace } from '../dom';
import { badge, counted, when } from '../format';
import { confirmPause, type PauseKind } from '../pause-card';
import { localInputToIso } from '../reschedule-card';
import type { Page } from './page';

const FIELDS = ['state', 'type', 'group', 'after', 'before', 'args', 'error', 'parent', 'worker', 'schedule'] as const;
/** Filters set by a link (a container's children, a worker's jobs, a schedule's runs), not typed: said above the table, kept by Apply. */
const SCOPES = ['parent', 'worker', 'schedule'] as const;

/** The jobs table: the filter lives in the URL (#/jobs?state=failed&args=…), pages by cursor. */
export function jobsPage(params: URLSearchParams): Page {
  const filter = new URLSearchParams();
  for (const f of FIELDS) if (params.get(f)) filter.set(f, params.get(f)!);
  const pages = new CursorPages(params.get('cursor'), load, { back: '← Newer', forward: 'Older →' });
  const body = h('div', { class: 'jobs-results' });
  const message = h('p', { class: 'error-text', id: 'filter-error' });

  async function load(cursor: string | null): Promise<void> {
    const q = new URLSearchParams(filter);
    if (cursor) q.set('cursor', cursor);
    q.set('limit', '50');
    try {
      const page = await api.get<{ jobs: JobRow[]; nextCursor: string | null }>(`jobs?${q}`);
      message.textContent = '';
      replace(body, table(page.jobs), pages.pager(page.nextCursor));
    } catch (err) {
      message.textContent = (err as Error).message;
      replace(body);
    }
  }

  const page: Page = {
    title: 'Jobs',
    // After a bulk action the table is read again in place: rebuilding the page lost its count.
    el: h('div', {}, h('h1', {}, 'Jobs'), form(filter), scopes(filter), message, bulk(filter, () => load(pages.current)), body),
    intervalMs: 0,
    loaded: false,
    async refresh() {
      await load(pages.current);
      page.loaded = true;
    },
  };
  return page;
}

function form(current: URLSearchParams): HTMLElement {
  const input = (name: string, label: string, placeholder = '', type = 'text') =>
    h('label', {}, h('span', {}, label), h('input', { name, type, placeholder, value: current.get(name) ?? '', id: `f-${name}` }));
  const state = h('select', { name: 'state', id: 'f-state' }, h('option', { value: '' }, 'any state'), ...STATES.map((st) => h('option', { value: st }, st)));
  state.value = STATES.includes(current.get('state') as never) ? current.get('state')! : '';
  if (current.get('state') && !state.value) state.append(h('option', { value: current.get('state')! }, current.get('state')!)), (state.value = current.get('state')!);
  const el = h(
    'form',
    { class: 'filters card', id: 'jobs-filter' },
    h('label', {}, h('span', {}, 'State'), state),
    input('type', 'Type'),
    input('group', 'Group'),
    input('after', 'Created after (ISO time)', 'e.g. 2026-11-30T10:00Z'),
    input('before', 'Created before (ISO time)', 'e.g. 2026-11-30T12:00Z'),
    h('label', { class: 'wide' }, h('span', {}, 'Args contain (JSON)'), h('input', { name: 'args', id: 'f-args', placeholder: '{"tenant":"acme"}', value: current.get('args') ?? '', class: 'mono' })),
    input('error', 'Error contains'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Apply'), h('a', { href: '#/jobs', class: 'button' }, 'Clear')),
  );
  el.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(el)) {
      const text = String(v).trim();
      if (!text) continue;
      // datetime-local gives local time without a zone; the API wants ISO 8601.
      q.set(k, (k === 'after' || k === 'before') && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text) ? new Date(text).toISOString() : text);
    }
    for (const scope of SCOPES) if (current.get(scope)) q.set(scope, current.get(scope)!);
    location.hash = `#/jobs?${q}`;
  });
  return el;
}

/** "Children of #12", "Held by worker host:1:ab now", "Runs of schedule nightly", each with a link that drops it. */
function scopes(current: URLSearchParams): HTMLElement | null {
  const given = SCOPES.filter((scope) => current.get(scope));
  if (!given.length) return null;
  const without = (scope: string) => {
    const q = new URLSearchParams(current);
    q.delete(scope);
    return `#/jobs?${q}`;
  };
  return h(
    'p',
    { class: 'scopes', id: 'jobs-scope' },
    ...given.map((scope) =>
      h(
        'span',
        { class: 'scope', 'data-scope': scope },
        ...(scope === 'parent'
          ? ['Children of ', h('a', { href: `#/job/${current.get('parent')}` }, `#${current.get('parent')}`)]
          : scope === 'schedule'
            ? ['Runs of schedule ', h('a', { href: `#/schedules?${new URLSearchParams({ name: current.get('schedule')! })}`, class: 'mono' }, current.get('schedule')!), ' (its slots, not its Run now jobs)']
            : ['Held by worker ', h('code', {}, current.get('worker')!), ' now (leased or running)']),
        ' ',
        h('a', { href: without(scope), class: 'muted', 'aria-label': `Drop this filter` }, '✕'),
      ),
    ),
  );
}

function bulk(filter: URLSearchParams, reload: () => Promise<void>): HTMLElement | null {
  if (READ_ONLY || ![...filter.keys()].length) return null;
  const out = h('span', { class: 'muted', id: 'bulk-result' });
  const run = (action: 'retry-many' | 'cancel-many' | 'remove-many' | 'run-now-many' | 'reschedule-many', verb: string, ask: string, body: unknown = { filter: Object.fromEntries(filter) }) => async () => {
    if (!window.confirm(ask)) return;
    try {
      const r = await api.post<{ count: number }>(`jobs/${action}`, body);
      out.textContent = `${verb}: ${counted(r.count, 'job')}.`;
      await reload();
    } catch (err) {
      out.textContent = (err as Error).message;
    }
  };
  // One type or one group in the filter: it can be paused from here, as from the overview.
  const pausable = (['type', 'group'] as const).flatMap((kind) => {
    const name = filter.get(kind);
    return name && !(kind === 'type' && name.includes(',')) ? [{ kind, name }] : [];
  });
  const pause = (kind: PauseKind, name: string) => async () => {
    if (!confirmPause(kind, name)) return;
    try {
      await api.post('pause', { [kind]: name });
      out.textContent = `Paused ${kind} ${name}: resume it on the overview.`;
    } catch (err) {
      out.textContent = (err as Error).message;
    }
  };
  // Reschedule all matching: only the fields given are sent.
  const priority = h('input', { type: 'number', id: 'bulk-priority', min: 0, max: 2147483647, step: 1, 'aria-label': 'Priority for every matching job not started' });
  const runAfter = h('input', { type: 'datetime-local', id: 'bulk-run-after', step: 1, 'aria-label': 'Start after, for every matching job not started' });
  const reschedule = async () => {
    const body: { filter: Record<string, string>; priority?: number; runAfter?: string } = { filter: Object.fromEntries(filter) };
    if (priority.value !== '') body.priority = Number(priority.value);
    if (runAfter.value !== '') {
      const at = localInputToIso(runAfter.value);
      if (at === null) return void (out.textContent = 'Start after: pick a date and a time.');
      body.runAfter = at;
    }
    if (body.priority === undefined && body.runAfter === undefined) return void (out.textContent = 'Give a priority, a start, or both.');
    const what = [body.priority === undefined ? null : `priority ${body.priority}`, body.runAfter === undefined ? null : `start after ${new Date(body.runAfter).toLocaleString()}`].filter(Boolean).join(', ');
    await run('reschedule-many', 'Rescheduled', `Reschedule every job matching this filter that has not started (waiting or ready): ${what}?`, body)();
  };
  return h(
    'div',
    { class: 'bulk' },
    h('button', { type: 'button', id: 'retry-many', onclick: run('retry-many', 'Retried', 'Retry every failed or cancelled job matching this filter?') }, 'Retry all matching (failed/cancelled)'),
    h('button', { type: 'button', id: 'run-now-many', onclick: run('run-now-many', 'Brought forward', 'Run every delayed job matching this filter now (waiting or ready, delays and backoffs dropped)?') }, 'Run all matching now (delayed)'),
    h('button', { type: 'button', id: 'cancel-many', class: 'danger', onclick: run('cancel-many', 'Cancelled', 'Cancel every unfinished job matching this filter?') }, 'Cancel all matching (unfinished)'),
    h('button', { type: 'button', id: 'remove-many', class: 'danger', onclick: run('remove-many', 'Removed', 'Remove every finished job matching this filter, for good (rows, edges, results)? Jobs unfinished work still needs stay.') }, 'Remove all matching (finished)'),
    ...pausable.map(({ kind, name }) => h('button', { type: 'button', id: `pause-${kind}`, class: 'danger', onclick: pause(kind, name) }, `Pause ${kind} ${name}`)),
    h(
      'form',
      { class: 'inline-form bulk-reschedule', id: 'bulk-reschedule', onsubmit: (ev: Event) => (ev.preventDefault(), void reschedule()) },
      h('label', {}, h('span', {}, 'Priority'), priority),
      h('label', {}, h('span', {}, 'Start after'), runAfter),
      h('button', { type: 'submit', id: 'reschedule-many' }, 'Reschedule all matching (not started)'),
    ),
    out,
  );
}

/**
 * `lastError` of a job that has not failed for good (done after a retry, ready for its next
 * attempt, cancelled) belongs to an earlier attempt: muted and said so, not red as a failure.
 */
function errorCell(j: JobRow): HTMLElement {
  if (!j.error) return h('td', { class: 'cell-error' });
  const earlier = j.state !== 'failed';
  return h(
    'td',
    { class: earlier ? 'cell-error earlier' : 'cell-error', title: earlier ? 'Of an earlier attempt' : null },
    h('div', { class: 'clamp' }, earlier ? h('span', { class: 'earlier-label' }, 'earlier attempt: ') : null, j.error.text),
  );
}

function table(jobs: JobRow[]): HTMLElement {
  if (!jobs.length) return h('p', { class: 'muted', id: 'no-jobs' }, 'No job matches.');
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'table jobs', id: 'jobs-table' },
      h('thead', {}, h('tr', {}, ...['id', 'type', 'state', 'group', 'attempts', 'progress', 'created', 'args', 'error'].map((c) => h('th', {}, c)))),
      h(
        'tbody',
        {},
        ...jobs.map((j) =>
          h(
            'tr',
            { 'data-id': j.id },
            h('td', {}, h('a', { href: `#/job/${j.id}` }, `#${j.id}`)),
            h('td', { class: 'type' }, j.type, j.isContainer ? h('span', { class: 'tag' }, 'container') : null),
            h('td', {}, badge(j.state)),
            h('td', {}, j.group),
            h('td', { class: 'num' }, `${j.attempts}/${j.maxAttempts}`),
            h('td', { class: 'num' }, `${j.progress}%`),
            h('td', { class: 'nowrap' }, when(j.createdAt)),
            h('td', { class: 'mono cell-args' }, h('div', { class: 'clamp' }, j.args.text)),
            errorCell(j),
          ),
        ),
      ),
    ),
  );
}

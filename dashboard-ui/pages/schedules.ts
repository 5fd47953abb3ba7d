import { api, READ_ONLY, type ScheduleRow } from '../api';
import { CursorPages } from '../cursor-pages';
import { h, replace } from '../dom';
import { badge, counted, when } from '../format';
import { Part, patchChildren } from '../patch';
import type { Page } from './page';

const FIELDS = ['name', 'type', 'group', 'lastRun'] as const;

/** The last run's states the filter offers (findSchedules' lastRunState, as a comma list). */
const LAST_RUN: ReadonlyArray<readonly [string, string]> = [
  ['failed', 'failed'],
  ['failed,cancelled', 'failed or cancelled'],
  ['leased,running', 'running'],
  ['waiting,ready', 'waiting to run'],
  ['done', 'done'],
];

/**
 * Recurring schedules by name, optionally one by name, those of a type or group, or those whose
 * last run is in some states (#/schedules?name=…&type=…&group=…&lastRun=failed), paged by cursor.
 */
export function schedulesPage(params: URLSearchParams): Page {
  const filter = new URLSearchParams();
  for (const f of FIELDS) if (params.get(f)) filter.set(f, params.get(f)!);
  const pages = new CursorPages(null, load, { back: '← Previous', forward: 'Next →' });
  // The table stays across refreshes and only rows whose schedule changed are redrawn: a tick
  // that moved one schedule's next slot leaves the others' buttons in place.
  const rows = h('tbody', {});
  const shell = tableShell(rows);
  const empty = h('p', { class: 'muted', id: 'no-schedules', hidden: true }, 'No schedule matches.');
  shell.hidden = true;
  const pager = new Part(h('div', { class: 'part' }));
  const body = h('div', { class: 'schedules-results' }, shell, empty, pager.el);
  const total = h('p', { class: 'muted', id: 'schedule-count' });
  const message = h('p', { class: 'error-text', id: 'schedules-error' });
  // What the last action did; kept across refreshes until the next one.
  const result = h('p', { id: 'schedule-result' });

  async function load(cursor: string | null): Promise<void> {
    const q = new URLSearchParams(filter);
    q.set('limit', '50');
    if (cursor) q.set('cursor', cursor);
    try {
      const page = await api.get<{ schedules: ScheduleRow[]; nextCursor: string | null; count: number }>(`schedules?${q}`);
      message.textContent = '';
      total.textContent = `${counted(page.count, 'schedule')} in all${[...filter.keys()].length ? ' (before the filter)' : ''}.`;
      body.hidden = false;
      shell.hidden = !page.schedules.length;
      empty.hidden = !!page.schedules.length;
      patchChildren(rows, page.schedules, (s) => s.name, (s) => row(s, act));
      pager.show([page.nextCursor, pages.depth], () => [pages.pager(page.nextCursor)]);
    } catch (err) {
      message.textContent = (err as Error).message;
      body.hidden = true;
    }
  }

  async function act(s: ScheduleRow, action: 'run-now' | 'remove'): Promise<void> {
    const asked =
      action === 'run-now'
        ? `Run schedule "${s.name}" once now? It enqueues one ${s.type} job (args.manual: true); its next slot does not move.`
        : `Remove schedule "${s.name}"? It enqueues nothing more; the jobs it already enqueued stay.`;
    if (!window.confirm(asked)) return;
    const path = `schedules/${encodeURIComponent(s.name)}/${action}`;
    try {
      if (action === 'run-now') {
        const job = await api.post<{ id: number }>(path);
        replace(result, `Enqueued `, h('a', { href: `#/job/${job.id}` }, `job #${job.id}`), ` for schedule ${s.name}.`);
      } else {
        await api.post(path);
        replace(result, `Removed schedule ${s.name}.`);
      }
      message.textContent = '';
    } catch (err) {
      replace(result);
      message.textContent = (err as Error).message;
      return;
    }
    await load(pages.current);
  }

  const page: Page = {
    title: 'Schedules',
    el: h('div', {}, h('h1', {}, 'Recurring schedules'), form(filter), total, result, message, body),
    // Next and last slots move every tick: the current page follows them.
    intervalMs: 5000,
    loaded: false,
    async refresh() {
      await load(pages.current);
      page.loaded = true;
    },
  };
  return page;
}

function form(current: URLSearchParams): HTMLElement {
  const input = (name: string, label: string) => h('label', {}, h('span', {}, label), h('input', { name, id: `f-schedule-${name}`, value: current.get(name) ?? '' }));
  // "Which schedules are failing now?": the last slot's job state, not any earlier run's.
  const lastRun = h('select', { name: 'lastRun', id: 'f-schedule-lastRun' }, h('option', { value: '' }, 'any'), ...LAST_RUN.map(([value, label]) => h('option', { value }, label)));
  const asked = current.get('lastRun') ?? '';
  if (asked && !LAST_RUN.some(([value]) => value === asked)) lastRun.append(h('option', { value: asked }, asked));
  lastRun.value = asked;
  const el = h(
    'form',
    { class: 'filters card', id: 'schedules-filter' },
    input('name', 'Name'),
    input('type', 'Job type'),
    input('group', 'Group'),
    h('label', {}, h('span', {}, 'Last run'), lastRun),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Apply'), h('a', { href: '#/schedules', class: 'button' }, 'Clear')),
  );
  el.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(el)) if (String(v).trim()) q.set(k, String(v).trim());
    location.hash = [...q.keys()].length ? `#/schedules?${q}` : '#/schedules';
  });
  return el;
}

function tableShell(rows: HTMLElement): HTMLElement {
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'table schedules', id: 'schedules-table' },
      h('thead', {}, h('tr', {}, ...['name', 'type', 'cron', 'time zone', 'group', 'next slot', 'last enqueued slot', 'args', ...(READ_ONLY ? [] : [''])].map((c) => h('th', {}, c)))),
      rows,
    ),
  );
}

function row(s: ScheduleRow, act: (s: ScheduleRow, action: 'run-now' | 'remove') => Promise<void>): HTMLElement {
  return h(
    'tr',
    { 'data-name': s.name },
    h(
      'td',
      { class: 'mono nowrap' },
      s.name,
      s.declared ? h('span', { class: 'tag', title: 'An @Recurring method of a running process: it is removed from the code, not from here' }, '@Recurring') : null,
    ),
    // The jobs a schedule enqueued carry its type: the link lists them, newest first.
    h('td', { class: 'type' }, h('a', { href: `#/jobs?${new URLSearchParams({ type: s.type })}` }, s.type)),
    h('td', { class: 'mono nowrap' }, s.cron),
    h('td', { class: 'nowrap' }, s.timeZone),
    h('td', { class: 'group' }, s.group === null ? '—' : h('a', { href: `#/schedules?${new URLSearchParams({ group: s.group })}` }, s.group)),
    s.dormant
      ? h('td', { class: 'nowrap muted', title: 'An @Recurring schedule that no running process declares: it does not fire' }, 'dormant')
      : h('td', { class: 'nowrap' }, when(s.nextRunAt)),
    lastSlot(s),
    h('td', { class: 'mono cell-args' }, h('div', { class: 'clamp' }, s.args.text)),
    READ_ONLY
      ? null
      : h(
          'td',
          { class: 'nowrap schedule-actions' },
          h('button', { type: 'button', class: 'run-now', onclick: () => void act(s, 'run-now') }, 'Run now'),
          // A declared @Recurring would come back at its process's next start: the server refuses it too.
          s.declared ? null : h('button', { type: 'button', class: 'danger remove', onclick: () => void act(s, 'remove') }, 'Remove'),
        ),
  );
}

/**
 * When the last slot was and how its job went, a link to it: "did last night's run succeed?" at a
 * glance. A job gone since (removed, or deleted or archived by retention) is said to be. "runs"
 * lists the schedule's slot jobs (find({ schedule })): did it fail before, and since when?
 */
function lastSlot(s: ScheduleRow): HTMLElement {
  if (s.lastRunAt === null) return h('td', { class: 'nowrap last-slot' }, '—');
  const job = s.lastJob;
  return h(
    'td',
    { class: 'nowrap last-slot' },
    when(s.lastRunAt),
    ' ',
    job === null
      ? h('span', { class: 'muted', title: 'Its job is no longer in the jobs table: removed, or taken by retention (deleted or archived)' }, 'removed')
      : h('a', { href: `#/job/${job.id}`, class: 'last-job', title: `Job #${job.id}` }, badge(job.state)),
    ' ',
    h('a', { href: `#/jobs?${new URLSearchParams({ schedule: s.name })}`, class: 'runs', title: 'Every slot job of this schedule still in the jobs table, newest first' }, 'runs'),
  );
}

import { api, type ScheduleRow } from '../api';
import { h, replace } from '../dom';
import { when } from '../format';
import type { Page } from './page';

/** Recurring schedules by name, optionally of one type (#/schedules?type=…), paged by cursor. */
export function schedulesPage(params: URLSearchParams): Page {
  const type = params.get('type') ?? '';
  const cursors: Array<string | null> = [null];
  const body = h('div', { class: 'schedules-results' });
  const total = h('p', { class: 'muted', id: 'schedule-count' });
  const message = h('p', { class: 'error-text', id: 'schedules-error' });

  async function load(cursor: string | null): Promise<void> {
    const q = new URLSearchParams({ limit: '50' });
    if (type) q.set('type', type);
    if (cursor) q.set('cursor', cursor);
    try {
      const page = await api.get<{ schedules: ScheduleRow[]; nextCursor: string | null; count: number }>(`schedules?${q}`);
      message.textContent = '';
      total.textContent = `${page.count.toLocaleString()} schedule(s) in all${type ? ', of every type' : ''}.`;
      replace(body, table(page.schedules), pager(page.nextCursor));
    } catch (err) {
      message.textContent = (err as Error).message;
      replace(body);
    }
  }

  function pager(next: string | null): HTMLElement {
    const go = (cursor: string | null) => void load(cursor);
    return h(
      'div',
      { class: 'pager' },
      cursors.length > 1 ? h('button', { type: 'button', id: 'prev-page', onclick: () => (cursors.pop(), go(cursors[cursors.length - 1])) }, '← Previous') : null,
      next ? h('button', { type: 'button', id: 'next-page', onclick: () => (cursors.push(next), go(next)) }, 'Next →') : null,
    );
  }

  const page: Page = {
    title: 'Schedules',
    el: h('div', {}, h('h1', {}, 'Recurring schedules'), form(type), total, message, body),
    // Next and last slots move every tick: the current page follows them.
    intervalMs: 5000,
    loaded: false,
    async refresh() {
      await load(cursors[cursors.length - 1]);
      page.loaded = true;
    },
  };
  return page;
}

function form(type: string): HTMLElement {
  const el = h(
    'form',
    { class: 'filters card', id: 'schedules-filter' },
    h('label', {}, h('span', {}, 'Job type'), h('input', { name: 'type', id: 'f-schedule-type', value: type })),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Apply'), h('a', { href: '#/schedules', class: 'button' }, 'Clear')),
  );
  el.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const value = String(new FormData(el).get('type') ?? '').trim();
    location.hash = value ? `#/schedules?${new URLSearchParams({ type: value })}` : '#/schedules';
  });
  return el;
}

function table(schedules: ScheduleRow[]): HTMLElement {
  if (!schedules.length) return h('p', { class: 'muted', id: 'no-schedules' }, 'No schedule matches.');
  return h(
    'table',
    { class: 'table', id: 'schedules-table' },
    h('thead', {}, h('tr', {}, ...['name', 'type', 'cron', 'time zone', 'group', 'next slot', 'last enqueued slot', 'args'].map((c) => h('th', {}, c)))),
    h(
      'tbody',
      {},
      ...schedules.map((s) =>
        h(
          'tr',
          { 'data-name': s.name },
          h('td', { class: 'mono nowrap' }, s.name),
          // The jobs a schedule enqueued carry its type: the link lists them, newest first.
          h('td', { class: 'type' }, h('a', { href: `#/jobs?${new URLSearchParams({ type: s.type })}` }, s.type)),
          h('td', { class: 'mono nowrap' }, s.cron),
          h('td', {}, s.timeZone),
          h('td', {}, s.group ?? '—'),
          h('td', { class: 'nowrap' }, when(s.nextRunAt)),
          h('td', { class: 'nowrap' }, when(s.lastRunAt)),
          h('td', { class: 'mono cell-args' }, h('div', { class: 'clamp' }, s.args.text)),
        ),
      ),
    ),
  );
}

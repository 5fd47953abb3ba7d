import { api, STATES, type Overview } from '../api';
import { h, s } from '../dom';
import { count, duration } from '../format';
import { Part } from '../patch';
import { PauseCard } from '../pause-card';
import { TypesCard } from '../types-card';
import { GroupsCard } from '../groups-card';
import { WorkersCard } from '../workers-card';
import type { Page } from './page';

export function overviewPage(): Page {
  // Built once and updated in place: the count cards are links, and a card redrawn between the
  // press and the release of a click would lose it. The other parts are redrawn when they change.
  const counts = countCards();
  const chart = new Part(h('div', { class: 'part' }));
  const now = new Part(h('div', { class: 'part' }));
  // Kept across refreshes: it holds a form.
  const pauses = new PauseCard();
  const types = new TypesCard(pauses, () => void page.refresh());
  const groups = new GroupsCard();
  const holders = new WorkersCard();
  const content = h(
    'div',
    {},
    h('h1', {}, 'Overview'),
    counts.el,
    h('div', { class: 'grid2' }, chart.el, now.el),
    types.el,
    h('div', { class: 'grid2' }, groups.el, holders.el),
  );
  const page: Page = {
    title: 'Overview',
    el: h('div', { class: 'overview' }, content, pauses.el),
    intervalMs: 2000,
    loaded: false,
    async refresh() {
      const asOf = pauses.version;
      const o = await api.get<Overview>('overview');
      page.loaded = true;
      counts.update(o);
      chart.show(o.throughput, () => [throughput(o)]);
      types.update(o);
      now.show([o.oldestReadyAgeMs, o.failingSchedules], () => [health(o, pauses.summary)]);
      groups.update(o);
      holders.update(o);
      pauses.update(o.paused, o.pausedCount, asOf);
    },
  };
  return page;
}

function countCards(): { el: HTMLElement; update(o: Overview): void } {
  const figures = STATES.map(() => h('div', { class: 'count-n' }, '…'));
  const el = h(
    'section',
    { class: 'counts' },
    ...STATES.map((st, i) => h('a', { class: `count-card st-border-${st}`, href: `#/jobs?state=${st}`, 'data-state': st }, figures[i], h('div', { class: 'count-label' }, st))),
  );
  return {
    el,
    update(o) {
      STATES.forEach((st, i) => {
        const text = count(o.counts[st], o.countCap);
        if (figures[i].textContent !== text) figures[i].textContent = text;
      });
    },
  };
}

function health(o: Overview, pausedSummary: HTMLElement): HTMLElement {
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Now'),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Oldest ready job waits'),
      h('dd', { 'data-testid': 'oldest-ready' }, o.oldestReadyAgeMs ? duration(o.oldestReadyAgeMs) : '—'),
      h('dt', {}, 'Paused'),
      // The Paused card's own count (its list and actions are below): it changes with that card.
      h('dd', { id: 'paused-count' }, pausedSummary),
      // Whose last slot's job failed: the Schedules page filtered so lists them.
      h('dt', {}, 'Schedules failing'),
      h(
        'dd',
        { id: 'failing-schedules' },
        o.failingSchedules
          ? h('a', { href: '#/schedules?lastRun=failed', class: 'failing', title: 'Schedules whose last run failed' }, o.failingSchedules.toLocaleString())
          : 'none',
      ),
    ),
  );
}

/** Done (green) and failed (red) per minute, stacked, the last 60 minutes. */
function throughput(o: Overview): HTMLElement {
  const W = 600;
  const H = 160;
  const pad = { l: 36, r: 8, t: 10, b: 22 };
  const max = Math.max(1, ...o.throughput.map((t) => t.done + t.failed));
  const bw = (W - pad.l - pad.r) / o.throughput.length;
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / max);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': 'jobs finished per minute' });
  // A middle line at half of 1 would be labelled 1 as well (rounded): it is drawn from 2 up.
  for (const v of max >= 2 ? [0, max / 2, max] : [0, max]) {
    svg.append(s('line', { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), class: 'grid-line' }), s('text', { x: pad.l - 4, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' }, Math.round(v)));
  }
  o.throughput.forEach((t, i) => {
    const x = pad.l + i * bw + 1;
    const about = t.estimated ? 'about ' : '';
    const title = `${t.minutesAgo} min ago: ${about}${t.done} done, ${about}${t.failed} failed${t.estimated ? ' (estimated from a sample of the minute)' : ''}`;
    if (t.done) svg.append(s('rect', { x, y: y(t.done), width: bw - 2, height: y(0) - y(t.done), class: 'bar-done' }, s('title', {}, title)));
    if (t.failed) svg.append(s('rect', { x, y: y(t.done + t.failed), width: bw - 2, height: y(t.done) - y(t.done + t.failed), class: 'bar-failed' }, s('title', {}, title)));
  });
  for (const [i, label] of [[0, '60 min ago'], [30, '30'], [59, 'now']] as const) {
    svg.append(s('text', { x: pad.l + i * bw + bw / 2, y: H - 6, class: 'axis', 'text-anchor': i === 0 ? 'start' : i === 59 ? 'end' : 'middle' }, label));
  }
  const total = o.throughput.reduce((a, t) => ({ done: a.done + t.done, failed: a.failed + t.failed }), { done: 0, failed: 0 });
  // Busy minutes are extrapolated from a bounded read (the server's throughput-history.ts).
  const approx = o.throughput.some((t) => t.estimated) ? '≈ ' : '';
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Finished per minute, last hour'),
    svg,
    h('p', { class: 'legend' }, h('span', { class: 'dot bar-done' }), `${approx}${total.done.toLocaleString()} done  `, h('span', { class: 'dot bar-failed' }), `${approx}${total.failed.toLocaleString()} failed`),
  );
}

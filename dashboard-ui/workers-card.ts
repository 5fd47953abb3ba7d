import type { Overview } from './api';
import { h } from './dom';
import { duration } from './format';
import { FigureRows } from './patch';

type WorkerRow = Overview['workers'][number];

/**
 * The overview's "Workers with jobs in flight" card: each lease owner, its jobs in flight and its
 * last heartbeat, the owner a link to the jobs it holds. The heartbeat's age changes at every
 * refresh, so the figures are updated in place (FigureRows): a row rebuilt each time would take
 * the link away between the press and the release of a click.
 */
export class WorkersCard {
  readonly el: HTMLElement;
  private readonly rows = new FigureRows<WorkerRow>(
    h('tbody', {}),
    (w) => w.owner,
    () => null,
    (w, figure) =>
      h(
        'tr',
        { 'data-worker': w.owner },
        h('td', { class: 'mono' }, h('a', { href: `#/jobs?${new URLSearchParams({ worker: w.owner })}`, title: 'The jobs it holds' }, w.owner)),
        h('td', { class: 'num' }, figure('inFlight', h('span', {}))),
        h('td', { class: 'num' }, figure('heartbeat', h('span', {}))),
      ),
  );
  private readonly table = h(
    'table',
    { class: 'table', id: 'workers-table', hidden: true },
    h('thead', {}, h('tr', {}, h('th', {}, 'lease owner'), h('th', { class: 'num' }, 'in flight'), h('th', { class: 'num' }, 'last heartbeat'))),
    this.rows.body,
  );
  private readonly empty = h('p', { class: 'muted', hidden: true }, 'No worker holds a job right now.');

  constructor() {
    this.el = h('section', { class: 'card', id: 'workers-card' }, h('h2', {}, 'Workers with jobs in flight'), this.table, this.empty);
  }

  update(o: Overview): void {
    this.table.hidden = !o.workers.length;
    this.empty.hidden = !!o.workers.length;
    this.rows.update(o.workers, (w) => ({ inFlight: w.inFlight, heartbeat: w.heartbeatAgeMs === null ? '—' : `${duration(w.heartbeatAgeMs)} ago` }));
  }
}

import type { Overview } from './api';
import { h } from './dom';
import { FigureTable } from './figure-table';
import { duration } from './format';

type WorkerRow = Overview['workers'][number];

/**
 * The overview's "Workers with jobs in flight" card: each lease owner, its jobs in flight and its
 * last heartbeat, the owner a link to the jobs it holds. The heartbeat's age changes at every
 * refresh; a row rebuilt each time would take the link away between a click's press and release.
 */
export class WorkersCard {
  private readonly table = new FigureTable<WorkerRow>({
    id: 'workers-card',
    title: 'Workers with jobs in flight',
    tableId: 'workers-table',
    heads: [{ label: 'lease owner' }, { label: 'in flight', num: true }, { label: 'last heartbeat', num: true }],
    empty: { text: 'No worker holds a job right now.' },
    key: (w) => w.owner,
    fixed: () => null,
    build: (w, figure) =>
      h(
        'tr',
        { 'data-worker': w.owner },
        h('td', { class: 'mono' }, h('a', { href: `#/jobs?${new URLSearchParams({ worker: w.owner })}`, title: 'The jobs it holds' }, w.owner)),
        h('td', { class: 'num' }, figure('inFlight', h('span', {}))),
        h('td', { class: 'num' }, figure('heartbeat', h('span', {}))),
      ),
  });
  readonly el = this.table.el;

  update(o: Overview): void {
    this.table.update(o.workers, (w) => ({ inFlight: w.inFlight, heartbeat: w.heartbeatAgeMs === null ? '—' : `${duration(w.heartbeatAgeMs)} ago` }));
  }
}

import type { Overview } from './api';
import { h } from './dom';
import { FigureRows } from './patch';

type GroupRow = Overview['groups'][number];

/**
 * The overview's "Groups with work" card: ready and running jobs and the weight per group, the
 * group a link to its open jobs. The figures are updated in place (FigureRows), so a group's link
 * stays under the pointer while its counts move.
 */
export class GroupsCard {
  readonly el: HTMLElement;
  private readonly rows = new FigureRows<GroupRow>(
    h('tbody', {}),
    (g) => g.group,
    () => null,
    (g, figure) =>
      h(
        'tr',
        { 'data-group': g.group },
        h('td', {}, h('a', { href: `#/jobs?${new URLSearchParams({ group: g.group, state: 'ready,leased,running' })}` }, g.group)),
        h('td', { class: 'num' }, figure('ready', h('span', {}))),
        h('td', { class: 'num' }, figure('running', h('span', {}))),
        h('td', { class: 'num' }, figure('weight', h('span', {}))),
      ),
  );
  private readonly table = h(
    'table',
    { class: 'table', id: 'groups-table', hidden: true },
    h('thead', {}, h('tr', {}, h('th', {}, 'group'), h('th', { class: 'num' }, 'ready'), h('th', { class: 'num' }, 'running'), h('th', { class: 'num' }, 'weight'))),
    this.rows.body,
  );
  private readonly empty = h('p', { class: 'muted', hidden: true }, 'No group has ready or running jobs.');
  private readonly note = h('p', { class: 'note', hidden: true }, 'Showing the busiest groups from a bounded sample.');

  constructor() {
    this.el = h('section', { class: 'card', id: 'groups-card' }, h('h2', {}, 'Groups with work'), this.table, this.empty, this.note);
  }

  update(o: Overview): void {
    this.table.hidden = !o.groups.length;
    this.empty.hidden = !!o.groups.length;
    this.note.hidden = !o.groupsPartial;
    this.rows.update(o.groups, (g) => ({ ready: g.ready, running: g.running, weight: g.weight }));
  }
}

import type { Overview } from './api';
import { h } from './dom';
import { FigureTable } from './figure-table';

type GroupRow = Overview['groups'][number];

/**
 * The overview's "Groups with work" card: ready and running jobs and the weight per group, the
 * group a link to its open jobs, which stays under the pointer while the counts move.
 */
export class GroupsCard {
  private readonly table = new FigureTable<GroupRow>({
    id: 'groups-card',
    title: 'Groups with work',
    tableId: 'groups-table',
    heads: [{ label: 'group' }, { label: 'ready', num: true }, { label: 'running', num: true }, { label: 'weight', num: true }],
    empty: { text: 'No group has ready or running jobs.' },
    partial: 'Showing the busiest groups from a bounded sample.',
    key: (g) => g.group,
    fixed: () => null,
    build: (g, figure) =>
      h(
        'tr',
        { 'data-group': g.group },
        h('td', {}, h('a', { href: `#/jobs?${new URLSearchParams({ group: g.group, state: 'ready,leased,running' })}` }, g.group)),
        h('td', { class: 'num' }, figure('ready', h('span', {}))),
        h('td', { class: 'num' }, figure('running', h('span', {}))),
        h('td', { class: 'num' }, figure('weight', h('span', {}))),
      ),
  });
  readonly el = this.table.el;

  update(o: Overview): void {
    this.table.update(o.groups, (g) => ({ ready: g.ready, running: g.running, weight: g.weight }), o.groupsPartial);
  }
}

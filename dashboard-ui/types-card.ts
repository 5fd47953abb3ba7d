import { READ_ONLY, type Overview } from './api';
import { h } from './dom';
import { FigureRows } from './patch';
import type { PauseCard } from './pause-card';

type TypeRow = Overview['types'][number];
const FIGURES = ['waiting', 'ready', 'running', 'failed'] as const;

/**
 * The overview's "Types with work" card: per type its waiting, ready, in-flight and failed jobs, each a
 * link to the jobs list, and a Pause or Resume. Under load the figures change at every refresh:
 * they are updated in place, and a row is rebuilt only when its type is paused or resumed, so
 * a Pause pressed during a refresh is not lost.
 */
export class TypesCard {
  readonly el: HTMLElement;
  private readonly rows = new FigureRows<TypeRow>(
    h('tbody', {}),
    (t) => t.type,
    (t) => t.paused,
    (t, figure) => this.row(t, figure),
  );
  private readonly table = h(
    'div',
    { class: 'table-scroll', hidden: true },
    h(
      'table',
      { class: 'table types', id: 'types-table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'type'),
          h('th', { class: 'num' }, 'waiting'),
          h('th', { class: 'num' }, 'ready'),
          h('th', { class: 'num' }, 'in flight'),
          h('th', { class: 'num' }, 'failed'),
          READ_ONLY ? null : h('th', {}, ''),
        ),
      ),
      this.rows.body,
    ),
  );
  private readonly empty = h('p', { class: 'muted', id: 'no-types', hidden: true }, 'No type has waiting, ready, running or failed jobs.');
  private readonly note = h('p', { class: 'note', hidden: true }, 'Counted from a bounded sample of rows; the busiest types are shown.');

  constructor(
    private readonly pauses: PauseCard,
    private readonly reload: () => void,
  ) {
    this.el = h('section', { class: 'card', id: 'types-card' }, h('h2', {}, 'Types with work'), this.table, this.empty, this.note);
  }

  update(o: Overview): void {
    this.table.hidden = !o.types.length;
    this.empty.hidden = !!o.types.length;
    this.note.hidden = !o.typesPartial;
    this.rows.update(o.types, (t) => ({ waiting: t.waiting, ready: t.ready, running: t.running, failed: t.failed }));
  }

  private row(t: TypeRow, figure: <E extends HTMLElement>(name: string, el: E) => E): HTMLElement {
    const jobs = (q: Record<string, string>) => `#/jobs?${new URLSearchParams({ type: t.type, ...q })}`;
    const states: Record<(typeof FIGURES)[number], string> = { waiting: 'waiting', ready: 'ready', running: 'leased,running', failed: 'failed' };
    const action = t.paused ? 'resume' : 'pause';
    return h(
      'tr',
      { 'data-type': t.type },
      h(
        'td',
        { class: 'type' },
        h('a', { href: jobs({}) }, t.type),
        t.paused ? h('span', { class: 'tag', title: 'No worker starts its jobs until it is resumed' }, 'paused') : null,
      ),
      ...FIGURES.map((f) => h('td', { class: 'num' }, figure(f, h('a', { href: jobs({ state: states[f] }) })))),
      READ_ONLY
        ? null
        : h(
            'td',
            { class: 'nowrap type-action' },
            h(
              'button',
              { type: 'button', class: t.paused ? `${action}-type` : `danger ${action}-type`, onclick: () => void this.pauses.toggle(action, 'type', t.type).then(this.reload) },
              t.paused ? 'Resume' : 'Pause',
            ),
          ),
    );
  }
}

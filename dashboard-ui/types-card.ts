import { READ_ONLY, type Overview } from './api';
import { h } from './dom';
import { FigureTable } from './figure-table';
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
  private readonly table = new FigureTable<TypeRow>({
    id: 'types-card',
    title: 'Types with work',
    tableId: 'types-table',
    tableClass: 'types',
    scroll: true,
    heads: [
      { label: 'type' },
      { label: 'waiting', num: true },
      { label: 'ready', num: true },
      { label: 'in flight', num: true },
      { label: 'failed', num: true },
      READ_ONLY ? null : { label: '' },
    ],
    empty: { text: 'No type has waiting, ready, running or failed jobs.', id: 'no-types' },
    partial: 'Counted from a bounded sample of rows; the busiest types are shown.',
    key: (t) => t.type,
    fixed: (t) => t.paused,
    build: (t, figure) => this.row(t, figure),
  });
  readonly el = this.table.el;

  constructor(
    private readonly pauses: PauseCard,
    private readonly reload: () => void,
  ) {}

  update(o: Overview): void {
    this.table.update(o.types, (t) => ({ waiting: t.waiting, ready: t.ready, running: t.running, failed: t.failed }), o.typesPartial);
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

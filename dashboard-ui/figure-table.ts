import { h, type Child } from './dom';
import { FigureRows } from './patch';

export interface FigureTableSpec<T> {
  /** The card's id and heading. */
  id: string;
  title: string;
  /** The table's id and class, and its column heads (a head with class `num` is right-aligned). */
  tableId: string;
  tableClass?: string;
  heads: Array<{ label: string; num?: boolean } | null>;
  /** Put the table in its own horizontal scroll box (a wide table on a phone). */
  scroll?: boolean;
  /** Said instead of the table when there is no row. */
  empty: { text: string; id?: string };
  /** Said under the table when the server did not see every row. */
  partial?: string;
  /** See FigureRows: each row's key, the part whose change rebuilds it, and how it is built. */
  key: (item: T) => string;
  fixed: (item: T) => unknown;
  build: (item: T, figure: <E extends HTMLElement>(name: string, el: E) => E) => HTMLElement;
}

/**
 * An overview card holding a table whose figures move at every refresh: built once, its rows
 * patched by key and their figures written in place (FigureRows), so a link or a button in a
 * row stays under the pointer across refreshes; the table gives way to a sentence when empty.
 */
export class FigureTable<T> {
  readonly el: HTMLElement;
  private readonly rows: FigureRows<T>;
  private readonly table: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly note: HTMLElement;

  constructor(spec: FigureTableSpec<T>) {
    this.rows = new FigureRows<T>(h('tbody', {}), spec.key, spec.fixed, spec.build);
    const heads: Child[] = spec.heads.map((head) => (head ? h('th', head.num ? { class: 'num' } : {}, head.label) : null));
    const table = h('table', { class: spec.tableClass ? `table ${spec.tableClass}` : 'table', id: spec.tableId }, h('thead', {}, h('tr', {}, ...heads)), this.rows.body);
    this.table = spec.scroll ? h('div', { class: 'table-scroll' }, table) : table;
    this.table.hidden = true;
    this.empty = h('p', { class: 'muted', id: spec.empty.id, hidden: true }, spec.empty.text);
    this.note = h('p', { class: 'note', hidden: true }, spec.partial ?? '');
    this.el = h('section', { class: 'card', id: spec.id }, h('h2', {}, spec.title), this.table, this.empty, this.note);
  }

  /** `figures`: each row's figures by name (see FigureRows.update); `partial`: show the note. */
  update(items: readonly T[], figures: (item: T) => Record<string, number | string>, partial = false): void {
    this.table.hidden = !items.length;
    this.empty.hidden = !!items.length;
    this.note.hidden = !partial;
    this.rows.update(items, figures);
  }
}

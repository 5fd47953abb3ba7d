import { h } from './dom';

/**
 * Keyset paging for a table page: the cursors of the pages seen so far (a cursor only leads
 * forward, so going back pops one) and the pager's buttons.
 */
export class CursorPages {
  private readonly cursors: Array<string | null>;

  constructor(
    first: string | null,
    private readonly load: (cursor: string | null) => Promise<void>,
    private readonly labels: { back: string; forward: string },
  ) {
    this.cursors = [first];
  }

  /** The cursor of the page on screen (null: the first page). */
  get current(): string | null {
    return this.cursors[this.cursors.length - 1];
  }

  /** How many pages deep the page on screen is (1: the first). */
  get depth(): number {
    return this.cursors.length;
  }

  pager(next: string | null): HTMLElement {
    const back = () => {
      this.cursors.pop();
      void this.load(this.current);
    };
    const forward = (cursor: string) => () => {
      this.cursors.push(cursor);
      void this.load(cursor);
    };
    return h(
      'div',
      { class: 'pager' },
      this.cursors.length > 1 ? h('button', { type: 'button', id: 'prev-page', onclick: back }, this.labels.back) : null,
      next ? h('button', { type: 'button', id: 'next-page', onclick: forward(next) }, this.labels.forward) : null,
    );
  }
}

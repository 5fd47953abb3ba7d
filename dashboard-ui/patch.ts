import { replace, type Child } from './dom';

/**
 * Redraw only what changed. A page refreshed every few seconds that rebuilt its nodes each time
 * would clear a text selection in them and lose a click whose press and release straddle the
 * redraw (the button pressed is gone by the release); nodes whose data did not change stay.
 */

/** A part of a page whose children are rebuilt only when the data it shows changed. */
export class Part {
  private shown: string | null = null;

  constructor(readonly el: HTMLElement) {}

  /** `data` is compared as JSON with what was shown last; `build` runs only when it differs. */
  show(data: unknown, build: () => Child[]): void {
    const next = JSON.stringify(data);
    if (next === this.shown) return;
    this.shown = next;
    replace(this.el, ...build());
  }
}

const shownData = new WeakMap<Element, string>();

/**
 * Sets `parent`'s children to one element per item, in order: an item whose key and data are
 * unchanged keeps its element where it is (never detached), a changed one is rebuilt in place, a
 * gone one is removed.
 */
export function patchChildren<T>(parent: Element, items: readonly T[], key: (item: T) => string, build: (item: T) => Element): void {
  const byKey = new Map<string, Element>();
  for (const el of parent.children) {
    const k = el.getAttribute('data-key');
    if (k !== null) byKey.set(k, el);
  }
  const wanted = items.map((item) => {
    const k = key(item);
    const data = JSON.stringify(item);
    const old = byKey.get(k);
    if (old && shownData.get(old) === data) {
      byKey.delete(k);
      return old;
    }
    const el = build(item);
    el.setAttribute('data-key', k);
    shownData.set(el, data);
    return el;
  });
  const keep = new Set(wanted);
  for (const el of [...parent.children]) if (!keep.has(el)) el.remove();
  let at = parent.firstElementChild;
  for (const el of wanted) {
    if (el === at) at = at.nextElementSibling;
    else parent.insertBefore(el, at);
  }
}

/**
 * Table rows whose figures change at every refresh under load (counts, ages) while the rest of
 * the row (a name, a link, a button) does not: a row is rebuilt only when its `fixed` part
 * changes, its figures are set in place. `build` makes the row and hands each figure's element
 * to `figure(name, el)`; `update` then writes the figures' texts into them.
 */
export class FigureRows<T> {
  private readonly cells = new Map<string, Map<string, HTMLElement>>();

  constructor(
    readonly body: HTMLElement,
    private readonly key: (item: T) => string,
    private readonly fixed: (item: T) => unknown,
    private readonly build: (item: T, figure: <E extends HTMLElement>(name: string, el: E) => E) => HTMLElement,
  ) {}

  /** `figures`: each figure's value; a number is shown grouped (1,234) and marked `zero` when 0. */
  update(items: readonly T[], figures: (item: T) => Record<string, number | string>): void {
    const byKey = new Map(items.map((item) => [this.key(item), item]));
    patchChildren(
      this.body,
      items.map((item) => ({ key: this.key(item), fixed: this.fixed(item) })),
      (row) => row.key,
      (row) => {
        const cells = new Map<string, HTMLElement>();
        this.cells.set(row.key, cells);
        return this.build(byKey.get(row.key)!, (name, el) => (cells.set(name, el), el));
      },
    );
    for (const k of [...this.cells.keys()]) if (!byKey.has(k)) this.cells.delete(k);
    for (const [k, item] of byKey) {
      const cells = this.cells.get(k)!;
      for (const [name, value] of Object.entries(figures(item))) {
        const el = cells.get(name)!;
        const text = typeof value === 'number' ? value.toLocaleString() : value;
        if (el.textContent !== text) el.textContent = text;
        el.classList.toggle('zero', value === 0);
      }
    }
  }
}

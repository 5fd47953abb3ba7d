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

import { api, READ_ONLY } from './api';
import { h } from './dom';
import { Part, patchChildren } from './patch';

type Paused = Array<{ type?: string; group?: string }>;
export type PauseKind = 'type' | 'group';

/** The question before a pause, the same wherever the dashboard offers one (overview, jobs page). */
export function confirmPause(kind: PauseKind, name: string): boolean {
  return window.confirm(`Pause ${kind} "${name}"? No worker starts its jobs until it is resumed (on the overview).`);
}

/**
 * The overview's "Paused" card: what is paused, a Resume per entry and a form to pause a type
 * or a group. Built once per page and kept across the overview's refreshes: a name being typed
 * keeps its focus, and an entry's row is rebuilt only when that entry changes, so a Resume is not
 * replaced under the pointer.
 */
export class PauseCard {
  readonly el: HTMLElement;
  /** How many entries are paused, for the overview's "Now" card: updated with the list, so the two always agree. */
  readonly summary = h('span', {}, '…');
  private readonly entries = h('ul', { class: 'paused-entries' });
  /** "Nothing is paused", or how many more there are than listed. */
  private readonly rest = new Part(h('div', { class: 'part' }));
  private readonly list = h('div', { id: 'paused-list' }, this.entries, this.rest.el);
  private readonly message = h('p', { class: 'error-text pause-error', id: 'pause-error' });
  private readonly kind = h('select', { id: 'pause-kind', 'aria-label': 'What to pause' }, h('option', { value: 'type' }, 'type'), h('option', { value: 'group' }, 'group'));
  private readonly name = h('input', { id: 'pause-name', placeholder: 'e.g. render or acme', 'aria-label': 'Name of the type or group', maxlength: 200 });
  /** Counts the pauses and resumes done here: a refresh asked before the last one is stale. */
  version = 0;

  constructor() {
    const form = READ_ONLY
      ? null
      : h(
          'form',
          { class: 'pause-form', id: 'pause-form', onsubmit: (ev: Event) => (ev.preventDefault(), void this.pause()) },
          this.kind,
          this.name,
          h('button', { type: 'submit', class: 'danger', id: 'pause-submit' }, 'Pause'),
        );
    this.el = h(
      'section',
      { class: 'card', id: 'paused-card' },
      h('h2', {}, 'Paused'),
      this.list,
      form,
      this.message,
      form
        ? h('p', { class: 'muted small' }, 'Workers stop claiming the jobs of a paused type or group within one poll interval (at once on PostgreSQL). Running jobs finish, enqueue still works, and the pause holds across restarts until resumed.')
        : null,
    );
  }

  /** `asOf`: the `version` when the data was asked for; older than the last action, it is dropped. */
  update(paused: Paused, pausedCount: number, asOf = this.version): void {
    if (asOf !== this.version) return;
    this.summary.textContent = pausedCount ? `${pausedCount.toLocaleString()} (listed below)` : 'nothing';
    const entries = paused.map((p): [PauseKind, string] => (p.type !== undefined ? ['type', p.type] : ['group', p.group!]));
    // Keyed rows: resuming one entry, or another process pausing something, leaves the other
    // entries' Resume buttons where they are.
    patchChildren(this.entries, entries, ([kind, name]) => `${kind}:${name}`, ([kind, name]) =>
      h(
        'li',
        { 'data-kind': kind, 'data-name': name },
        h('span', { class: 'muted' }, `${kind} `),
        h('a', { href: `#/jobs?${new URLSearchParams({ [kind]: name })}` }, name),
        READ_ONLY ? null : h('button', { type: 'button', class: 'resume', onclick: () => void this.send('resume', kind, name) }, 'Resume'),
      ),
    );
    this.rest.show([paused.length, pausedCount], () =>
      !paused.length
        ? [h('p', { class: 'muted', id: 'nothing-paused' }, 'Nothing is paused.')]
        : pausedCount > paused.length
          ? [h('p', { class: 'note' }, `${pausedCount.toLocaleString()} in all, the first ${paused.length} shown.`)]
          : [],
    );
  }

  private async pause(): Promise<void> {
    const kind = this.kind.value as PauseKind;
    const name = this.name.value.trim();
    if (!name) {
      this.message.textContent = `Name the ${kind} to pause.`;
      return;
    }
    if (!confirmPause(kind, name)) return;
    if (await this.send('pause', kind, name)) this.name.value = '';
  }

  /** Pauses (after the confirmation) or resumes from elsewhere on the page; this card's list follows at once. */
  async toggle(action: 'pause' | 'resume', kind: PauseKind, name: string): Promise<void> {
    if (action === 'pause' && !confirmPause(kind, name)) return;
    await this.send(action, kind, name);
  }

  private async send(action: 'pause' | 'resume', kind: PauseKind, name: string): Promise<boolean> {
    try {
      const r = await api.post<{ paused: Paused; pausedCount: number }>(action, { [kind]: name });
      this.message.textContent = '';
      this.version++;
      this.update(r.paused, r.pausedCount);
      return true;
    } catch (err) {
      this.message.textContent = (err as Error).message;
      return false;
    }
  }
}

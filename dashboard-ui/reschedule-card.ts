import { api, READ_ONLY, type JobDetail } from './api';
import { h } from './dom';

/** `YYYY-MM-DDTHH:MM:SS` in the browser's time zone: what a datetime-local input holds. */
export function localInputValue(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A datetime-local input's value (the browser's local time) as UTC ISO text; null if it names no time. */
export function localInputToIso(value: string): string | null {
  const at = new Date(value);
  return isNaN(at.getTime()) ? null : at.toISOString();
}

/**
 * The job page's "Reschedule" card for a job that has not started: its priority and the time it
 * may start (`reschedule()`). Built once per page, outside the part redrawn every 2 s, so what
 * is being typed stays; it takes the job's values when first shown and after each change made here.
 */
export class RescheduleCard {
  readonly el: HTMLElement;
  private readonly priority = h('input', { type: 'number', id: 'reschedule-priority', min: 0, max: 2147483647, step: 1, 'aria-label': 'Priority' });
  private readonly runAfter = h('input', { type: 'datetime-local', id: 'reschedule-run-after', step: 1, 'aria-label': 'Start after' });
  private readonly message = h('p', { class: 'error-text form-error', id: 'reschedule-error' });
  /** The job's values the inputs were filled with: only fields the user changed are sent. */
  private filled: { priority: number; runAfter: number } | null = null;

  constructor(
    private readonly id: number,
    private readonly reload: () => void,
  ) {
    this.el = h(
      'section',
      { class: 'card', id: 'reschedule-card', hidden: true },
      h('h2', {}, 'Reschedule'),
      h(
        'form',
        { class: 'inline-form', id: 'reschedule-form', onsubmit: (ev: Event) => (ev.preventDefault(), void this.send()) },
        h('label', {}, h('span', {}, 'Priority '), this.priority),
        h('label', {}, h('span', {}, 'Start after '), this.runAfter),
        h('button', { type: 'submit', class: 'primary', id: 'reschedule-submit' }, 'Apply'),
      ),
      this.message,
      h('p', { class: 'muted small' }, 'Higher priorities are claimed first. A start in the past means now; a waiting job still waits for its upstreams too.'),
    );
  }

  /** Shown while the job has not started (and actions are allowed). */
  update(job: JobDetail): void {
    const open = !READ_ONLY && (job.state === 'waiting' || job.state === 'ready');
    this.el.hidden = !open;
    if (!open || this.filled) return;
    // Whole seconds, as the input shows them: an untouched field compares equal.
    this.filled = { priority: job.priority, runAfter: Math.floor(new Date(job.runAfter).getTime() / 1_000) * 1_000 };
    this.priority.value = String(job.priority);
    this.runAfter.value = localInputValue(job.runAfter);
  }

  private async send(): Promise<void> {
    const body: { priority?: number; runAfter?: string } = {};
    // An empty or fractional priority goes as typed: the server's message says what it takes.
    const priority = this.priority.value === '' ? NaN : Number(this.priority.value);
    if (priority !== this.filled?.priority) body.priority = priority;
    const at = localInputToIso(this.runAfter.value);
    if (at === null) {
      this.message.textContent = 'Start after: pick a date and a time.';
      return;
    }
    if (Date.parse(at) !== this.filled?.runAfter) body.runAfter = at;
    if (!Object.keys(body).length) {
      this.message.textContent = 'Nothing changed.';
      return;
    }
    try {
      await api.post(`jobs/${this.id}/reschedule`, body);
      this.message.textContent = '';
      this.filled = null; // the job's new values fill the inputs at the next refresh
    } catch (err) {
      this.message.textContent = (err as Error).message;
    }
    this.reload();
  }
}

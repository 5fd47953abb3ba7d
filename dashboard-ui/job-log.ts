import { api, type JobDetail, type LogLine, type LogPage } from './api';
import { h, replace } from './dom';
import { clock } from './format';

const FINISHED = ['done', 'failed', 'cancelled'];
const MAX_OFFERED_ATTEMPTS = 1_000;

/**
 * The job page's log: lines oldest first, 200 a page, "Load more" while the server has a
 * nextCursor. A job only appends to its log (a retry's lines too), so the pages before the last
 * stay as read and each refresh re-reads the last page alone, adding the rows it did not have: the table is
 * not rebuilt, and a selection in it survives the 2 s refresh. Every message is a text node.
 */
export class JobLog {
  readonly el: HTMLElement;
  private readonly body = h('tbody', {});
  private readonly table = h(
    'table',
    { class: 'table log-lines', id: 'job-log-lines' },
    h('thead', {}, h('tr', {}, h('th', {}, 'attempt'), h('th', {}, 'time'), h('th', {}, 'message'))),
    this.body,
  );
  private readonly empty = h('p', { class: 'muted', id: 'no-log-lines' }, 'No log lines');
  /** 'error': only the lines of failed attempts' errors (the error history), read with `?level=error`. */
  private level: 'error' | null = null;
  private readonly filter = h('button', { type: 'button', id: 'log-errors-only', 'aria-pressed': 'false', onclick: () => void this.toggleErrorsOnly() }, 'Errors only');
  /** One attempt's lines (`?attempt=`), or all. Offered: 1 to the highest attempt seen (the job's, or a line's: a retry starts over at 1). */
  private attempt: number | null = null;
  private offered = 0;
  private readonly attemptSelect = h(
    'select',
    { id: 'log-attempt', 'aria-label': 'attempt', onchange: () => void this.chooseAttempt() },
    h('option', { value: '' }, 'All attempts'),
  );
  private readonly content = h('div', {});
  private readonly footer = h('div', { class: 'pager' });
  private readonly message = h('p', { class: 'error-text log-error', id: 'log-error' });
  /** Cursor of the last page read (null: the first page) and how many rows come before it. */
  private tailCursor: string | null = null;
  private settledRows = 0;
  /** The lines of the last page on screen, and the cursor after it. */
  private tail: LogLine[] = [];
  private next: string | null = null;
  private lastAttempt = 0;
  /** Reads started; an answer to an older one than the newest is dropped (a refresh racing "Load more"). */
  private reads = 0;
  /** A finished job's log is read twice (lines written as it finished may land just after), then no more until it changes. */
  private finishedKey: string | null = null;
  private finishedReads = 0;
  private drawn = false;
  /** The page was left: a refresh still on its way reads no more. */
  private disposed = false;

  constructor(private readonly jobId: number) {
    this.el = h('section', { class: 'card', id: 'job-log' }, h('div', { class: 'card-head' }, h('h2', {}, 'Log'), h('div', { class: 'log-filters' }, this.attemptSelect, this.filter)), this.message, this.content, this.footer);
  }

  /** Called on each refresh of the job page with the job as just read. */
  async refresh(job: Pick<JobDetail, 'state' | 'attempts' | 'updatedAt'>): Promise<void> {
    this.offerAttempts(job.attempts);
    const key = FINISHED.includes(job.state) ? `${job.state}|${job.attempts}|${job.updatedAt}` : null;
    if (key !== this.finishedKey) [this.finishedKey, this.finishedReads] = [key, 0];
    if (key !== null && this.finishedReads >= 2) return;
    if (await this.readTail()) this.finishedReads++;
  }

  dispose(): void {
    this.disposed = true;
  }

  private reset(): void {
    this.reads++; // an answer still on its way belongs to the old log
    while (this.body.rows.length) this.body.deleteRow(-1);
    [this.tailCursor, this.settledRows, this.tail, this.next, this.lastAttempt] = [null, 0, [], null, 0];
  }

  /** Switches between every line and the errors alone. */
  private async toggleErrorsOnly(): Promise<void> {
    this.level = this.level ? null : 'error';
    this.filter.textContent = this.level ? 'All lines' : 'Errors only';
    this.filter.setAttribute('aria-pressed', String(this.level !== null));
    await this.refilter();
  }

  private async chooseAttempt(): Promise<void> {
    this.attempt = this.attemptSelect.value ? Number(this.attemptSelect.value) : null;
    await this.refilter();
  }

  /** Another filter is another log (and cursor scope): read from its first page. */
  private async refilter(): Promise<void> {
    const what = this.level ? 'No failed attempts' : 'No log lines';
    this.empty.textContent = this.attempt === null ? what : `${what} in attempt ${this.attempt}`;
    this.reset();
    this.finishedReads = 0;
    this.draw();
    await this.readTail();
  }

  /** Options up to attempt `n`, added once each (at most a thousand: the API takes any). */
  private offerAttempts(n: number): void {
    for (let a = this.offered + 1; a <= Math.min(n, MAX_OFFERED_ATTEMPTS); a++) this.attemptSelect.append(h('option', { value: a }, `Attempt ${a}`));
    this.offered = Math.max(this.offered, Math.min(n, MAX_OFFERED_ATTEMPTS));
  }

  private async loadMore(): Promise<void> {
    if (!this.next) return;
    this.settledRows += this.tail.length;
    [this.tailCursor, this.tail, this.next] = [this.next, [], null];
    this.drawFooter();
    await this.readTail();
  }

  /** True when the page was read and shown. */
  private async readTail(): Promise<boolean> {
    if (this.disposed) return false;
    const read = ++this.reads;
    const cursor = this.tailCursor;
    let page: LogPage;
    try {
      const query = new URLSearchParams();
      if (this.attempt !== null) query.set('attempt', String(this.attempt));
      if (this.level) query.set('level', this.level);
      if (cursor) query.set('cursor', cursor);
      page = await api.get<LogPage>(`jobs/${this.jobId}/logs${query.size ? `?${query}` : ''}`);
    } catch (err) {
      if (read === this.reads) this.message.textContent = (err as Error).message;
      return false;
    }
    if (read !== this.reads) return false;
    this.message.textContent = '';
    if (!this.continues(page.logs)) {
      // Not what was shown: lines only ever follow each other (by id), but should a page ever
      // differ, the log is read again from its first page rather than shown twice or in pieces.
      this.reset();
      return cursor === null ? this.show(page) : this.readTail();
    }
    return this.show(page);
  }

  /** Whether `lines` begin with the tail on screen, i.e. only add to it. */
  private continues(lines: LogLine[]): boolean {
    if (lines.length < this.tail.length) return false;
    return this.tail.every((l, i) => l.attempt === lines[i].attempt && l.at === lines[i].at && l.level === lines[i].level && l.message === lines[i].message);
  }

  private show(page: LogPage): true {
    for (const line of page.logs.slice(this.tail.length)) this.body.append(this.row(line));
    this.offerAttempts(Math.max(0, ...page.logs.map((l) => l.attempt)));
    this.tail = page.logs;
    this.next = page.nextCursor;
    this.draw();
    return true;
  }

  private row(line: LogLine): HTMLTableRowElement {
    const first = line.attempt !== this.lastAttempt && this.lastAttempt !== 0;
    this.lastAttempt = line.attempt;
    const error = line.level === 'error';
    const classes = [first ? 'attempt-start' : '', error ? 'log-level-error' : ''].filter(Boolean).join(' ');
    return h(
      'tr',
      { 'data-attempt': line.attempt, 'data-level': line.level, class: classes || null },
      h('td', {}, line.attempt),
      h('td', { class: 'nowrap', title: line.at }, clock(line.at)),
      // The error an attempt failed with (written with the failure): marked, not only coloured.
      h('td', { class: 'log-message' }, ...(error ? [h('span', { class: 'badge log-level-badge' }, 'failed'), ' '] : []), line.message),
    );
  }

  private draw(): void {
    const any = this.body.rows.length > 0;
    // Swapped only when it changes: re-appending the table would drop a selection in it.
    if (!this.drawn || any !== this.content.contains(this.table)) replace(this.content, any ? this.table : this.empty);
    this.drawn = true;
    this.drawFooter();
  }

  private drawFooter(): void {
    const has = this.footer.querySelector('#log-more') !== null;
    if (Boolean(this.next) === has) return;
    replace(this.footer, this.next ? h('button', { type: 'button', id: 'log-more', onclick: () => void this.loadMore() }, 'Load more') : null);
  }
}

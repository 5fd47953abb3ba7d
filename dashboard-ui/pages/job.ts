import { api, READ_ONLY, type JobDetail } from '../api';
import { h, type Child } from '../dom';
import { badge, boundedBlock, duration, progressBar, when } from '../format';
import { JobLog } from '../job-log';
import { Part } from '../patch';
import { RescheduleCard } from '../reschedule-card';
import type { Page } from './page';

const FINISHED = ['done', 'failed', 'cancelled'];

export function jobPage(id: number): Page {
  const message = h('p', { class: 'error-text', id: 'action-error' });
  // Each part is redrawn only when what it shows changed: a running job's progress moves without
  // clearing a selection in its args or taking the Cancel button away mid-click.
  const head = new Part(h('div', { class: 'job-head' }));
  const progress = new Part(h('section', { class: 'card' }));
  const facts = new Part(h('div', { class: 'grid2' }));
  const error = new Part(h('div', { class: 'part' }));
  const args = new Part(h('section', { class: 'card', id: 'job-args' }));
  const result = new Part(h('section', { class: 'card', id: 'job-result' }));
  // The log stays in place across refreshes: it keeps the pages loaded and only appends lines.
  const log = new JobLog(id);
  const reschedule = new RescheduleCard(id, () => void page.refresh());
  const details = h('div', {}, head.el, message, progress.el, facts.el, error.el, args.el, result.el);
  const el = h('div', { class: 'job' }, details, reschedule.el, log.el);
  const page: Page = {
    title: `Job #${id}`,
    el,
    intervalMs: 2000,
    loaded: false,
    async refresh() {
      const j = await api.get<JobDetail>(`jobs/${id}`);
      page.loaded = true;
      const canRunNow = (j.state === 'waiting' || j.state === 'ready') && new Date(j.runAfter).getTime() > Date.now();
      head.show([j.id, j.type, j.state, canRunNow], () => headOf(j, canRunNow, message, () => void page.refresh()));
      progress.show([j.progress, j.stage], () => [progressBar(j.progress, j.stage)]);
      facts.show([j.ref, j.group, j.weight, j.priority, j.attempts, j.maxAttempts, j.snoozes, j.isContainer, j.parentId, j.key, j.schedule, j.timeoutMs, j.createdAt, j.runAfter, j.startedAt, j.finishedAt, j.updatedAt, j.worker, j.leaseExpiresAt], () => factsOf(j));
      error.show([j.state === 'failed', j.error], () => [j.error ? errorCard(j.state, j.error) : null]);
      args.show(j.args, () => [h('h2', {}, 'Args'), boundedBlock(j.args)]);
      result.show(j.result, () => [h('h2', {}, 'Result'), j.result ? boundedBlock(j.result) : h('p', { class: 'muted' }, 'none')]);
      reschedule.update(j);
      await log.refresh(j);
    },
    dispose: () => log.dispose(),
  };
  return page;
}

function headOf(j: JobDetail, canRunNow: boolean, message: HTMLElement, reload: () => void): Child[] {
  const act = (action: 'cancel' | 'retry' | 'run-now') => async () => {
    try {
      await api.post(`jobs/${j.id}/${action}`);
      message.textContent = '';
    } catch (err) {
      message.textContent = (err as Error).message;
    }
    reload();
  };
  const remove = async () => {
    if (!window.confirm(`Remove job #${j.id} for good (its row, its edges, its result)?`)) return;
    try {
      await api.post(`jobs/${j.id}/remove`);
      location.hash = '#/jobs';
    } catch (err) {
      message.textContent = (err as Error).message;
    }
  };
  const actions = READ_ONLY
    ? null
    : h(
        'div',
        { class: 'actions' },
        canRunNow ? h('button', { type: 'button', id: 'run-now-job', onclick: act('run-now') }, 'Run now') : null,
        !FINISHED.includes(j.state) ? h('button', { type: 'button', id: 'cancel-job', class: 'danger', onclick: act('cancel') }, 'Cancel') : null,
        j.state === 'failed' || j.state === 'cancelled' ? h('button', { type: 'button', id: 'retry-job', class: 'primary', onclick: act('retry') }, 'Retry') : null,
        FINISHED.includes(j.state) ? h('button', { type: 'button', id: 'remove-job', class: 'danger', onclick: remove }, 'Remove') : null,
      );
  return [
    h('h1', {}, h('span', { class: 'muted' }, `#${j.id} `), h('span', { id: 'job-type' }, j.type)),
    badge(j.state),
    h('a', { href: `#/graph/${j.id}`, class: 'button', id: 'open-graph' }, 'Graph'),
    actions,
  ];
}

function factsOf(j: JobDetail): Node[] {
  const row = (label: string, value: Node | string | number | null) => [h('dt', {}, label), h('dd', {}, value === null ? '—' : value)];
  const took = j.startedAt && j.finishedAt ? duration(new Date(j.finishedAt).getTime() - new Date(j.startedAt).getTime()) : null;
  return [
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Fields'),
      h(
        'dl',
        { class: 'facts' },
        ...row('ref', j.ref),
        ...row('group', j.group),
        ...row('weight', j.weight),
        ...row('priority', j.priority),
        ...row('attempts', `${j.attempts} of ${j.maxAttempts}`),
        ...row('snoozed', j.snoozes === 0 ? null : j.snoozes === 1 ? 'once' : `${j.snoozes} times`),
        ...row('container', j.isContainer ? 'yes' : 'no'),
        ...row('parent', j.parentId === null ? null : h('a', { href: `#/job/${j.parentId}` }, `#${j.parentId}`)),
        ...row('children', j.isContainer ? h('a', { href: `#/jobs?parent=${j.id}` }, 'list') : null),
        ...row('key', j.key),
        ...(j.schedule === null
          ? []
          : row(
              'schedule',
              h(
                'span',
                {},
                h('a', { href: `#/schedules?${new URLSearchParams({ name: j.schedule })}`, class: 'mono', id: 'job-schedule', title: 'The recurring schedule that enqueued this job' }, j.schedule),
                // Two links side by side read as one name: a separator keeps them apart.
                h('span', { class: 'muted' }, ' · '),
                h('a', { href: `#/jobs?${new URLSearchParams({ schedule: j.schedule })}`, id: 'job-schedule-runs', title: 'Every slot job of this schedule, newest first' }, 'runs'),
              ),
            )),
        ...row('timeout', j.timeoutMs === null ? null : duration(j.timeoutMs)),
        // Only while in flight: a settled or waiting job is held by no one.
        ...(j.worker === null ? [] : row('worker', h('a', { href: `#/jobs?${new URLSearchParams({ worker: j.worker })}`, class: 'mono', id: 'job-worker', title: 'Every job this worker holds now' }, j.worker))),
      ),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Timestamps'),
      h(
        'dl',
        { class: 'facts' },
        ...row('created', when(j.createdAt)),
        ...row('run after', when(j.runAfter)),
        ...row('started', when(j.startedAt)),
        ...row('finished', when(j.finishedAt)),
        ...row('updated', when(j.updatedAt)),
        ...(j.leaseExpiresAt === null ? [] : row('lease until', when(j.leaseExpiresAt))),
        ...row('took', took),
      ),
    ),
  ];
}

/**
 * `lastError`. On a job that has not failed for good it is an earlier attempt's error (it
 * succeeded or is retrying since): said so, lest a done job look failed.
 */
function errorCard(state: string, error: NonNullable<JobDetail['error']>): HTMLElement {
  const earlier = state !== 'failed';
  return h(
    'section',
    { class: 'card', id: 'job-error' },
    h('h2', {}, earlier ? 'Last error' : 'Error'),
    earlier ? h('p', { class: 'muted', id: 'job-error-note' }, 'Of an earlier attempt; the log below has the error of each attempt.') : null,
    boundedBlock(error, 'code error'),
  );
}

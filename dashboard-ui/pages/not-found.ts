import { h } from '../dom';
import type { Page } from './page';

/**
 * A hash that names no page (a typo, an API path such as #/jobs/42, an old link) says so, rather
 * than showing the overview as if the link had worked. The hash is shown as text only.
 */
export function notFoundPage(hash: string): Page {
  let shown = hash;
  try {
    shown = decodeURIComponent(hash); // the browser percent-encodes a hash's spaces, quotes and angle brackets
  } catch {
    // a malformed escape: shown as it came
  }
  const id = /^#?\/(?:jobs?|graph)\/(\d+)(?:[/?]|$)/.exec(hash)?.[1];
  const links = [
    id ? h('a', { href: `#/job/${id}`, class: 'button primary', id: 'not-found-job' }, `Job #${id}`) : null,
    h('a', { href: '#/', class: 'button' }, 'Overview'),
    h('a', { href: '#/jobs', class: 'button' }, 'Jobs'),
    h('a', { href: '#/schedules', class: 'button' }, 'Schedules'),
  ];
  return {
    title: 'Not found',
    el: h(
      'div',
      { class: 'card error-card', id: 'not-found' },
      h('h2', {}, 'No such page'),
      h('p', {}, 'The dashboard has no page at ', h('code', { id: 'not-found-hash' }, shown), '.'),
      h('div', { class: 'actions' }, ...links),
    ),
    intervalMs: 0,
    loaded: true,
    async refresh() {},
  };
}

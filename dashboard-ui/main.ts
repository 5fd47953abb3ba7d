import { ApiError, READ_ONLY } from './api';
import { h, replace } from './dom';
import { graphPage } from './pages/graph';
import { jobPage } from './pages/job';
import { jobsPage } from './pages/jobs';
import { notFoundPage } from './pages/not-found';
import { overviewPage } from './pages/overview';
import { schedulesPage } from './pages/schedules';
import type { Page } from './pages/page';

/** Hash routes: #/ overview, #/jobs?…, #/job/ID, #/graph/ID, #/schedules?…; anything else is not found. */
function route(hash: string): Page {
  const [path, query = ''] = hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(query);
  let m: RegExpExecArray | null;
  if ((m = /^\/job\/(\d+)$/.exec(path))) return jobPage(Number(m[1]));
  if ((m = /^\/graph\/(\d+)$/.exec(path))) return graphPage(Number(m[1]));
  if (path === '/jobs') return jobsPage(params);
  if (path === '/schedules') return schedulesPage(params);
  if (path === '/' || path === '') return overviewPage();
  return notFoundPage(hash);
}

const main = h('main', { id: 'page' });
const status = h('span', { class: 'status', id: 'status' });
let current: Page | null = null;
let timer: number | undefined;
let generation = 0;

function nav(): HTMLElement {
  const link = (href: string, label: string) => h('a', { href, class: 'nav-link' }, label);
  return h(
    'header',
    { class: 'top' },
    h('a', { href: '#/', class: 'brand' }, 'Job queue'),
    h('nav', {}, link('#/', 'Overview'), link('#/jobs', 'Jobs'), link('#/schedules', 'Schedules')),
    READ_ONLY ? h('span', { class: 'read-only' }, 'read-only') : null,
    status,
  );
}

async function tick(gen: number): Promise<void> {
  if (!current || gen !== generation) return;
  try {
    if (document.visibilityState === 'visible' || !current.loaded) await current.refresh();
    if (gen !== generation) return;
    status.textContent = `updated ${new Date().toLocaleTimeString()}`;
    status.className = 'status';
  } catch (err) {
    if (gen !== generation) return;
    status.textContent = err instanceof ApiError ? `${err.status} ${err.message}` : `offline: ${(err as Error).message}`;
    status.className = 'status error';
    if (err instanceof ApiError && current.loaded === false) replace(main, h('div', { class: 'card error-card' }, h('h2', {}, `Error ${err.status}`), h('p', {}, err.message)));
  }
  if (gen === generation && current.intervalMs) timer = window.setTimeout(() => void tick(gen), current.intervalMs);
}

function show(): void {
  window.clearTimeout(timer);
  current?.dispose?.();
  generation++;
  current = route(location.hash || '#/');
  for (const a of document.querySelectorAll<HTMLAnchorElement>('a.nav-link')) {
    a.classList.toggle('active', (location.hash || '#/').split('?')[0] === a.getAttribute('href'));
  }
  replace(main, current.el);
  document.title = `${current.title} · Job queue`;
  void tick(generation);
}

document.body.append(nav(), main);
window.addEventListener('hashchange', show);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && current?.intervalMs) {
    window.clearTimeout(timer);
    void tick(generation);
  }
});
show();

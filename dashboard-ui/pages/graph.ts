import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api';
import { api, type Graph, type GraphNode } from '../api';
import { h, replace, s } from '../dom';
import { layOut } from '../graph-layout';
import { widestFan } from '../widest-fan';
import type { Page } from './page';

const NODE_W = 176;
const NODE_H = 50;
/** Above this many jobs the layout trades a few more crossings for time. */
const LARGE_GRAPH = 200;
/** A job with more edges than this (out or in) has them drawn as one trunk. */
const MERGE_FAN = 16;

/**
 * The job's DAG, left to right, containers drawn as boxes around their children. ELK lays it out
 * (layered, compound nodes, edges routed across container borders); the layout is recomputed
 * only when the set of nodes or edges changes, state and progress just recolour the nodes.
 */
export function graphPage(id: number): Page {
  const canvas = h('div', { class: 'graph-canvas', id: 'graph-canvas' });
  // Fit: the whole DAG scaled into the window; off: natural size, scrolled.
  const fit = h('button', { type: 'button', id: 'graph-fit', onclick: () => fit.textContent = canvas.classList.toggle('fit') ? 'Actual size' : 'Fit to window' }, 'Fit to window');
  const info = h('p', { class: 'muted', id: 'graph-info' });
  let shape = '';
  const drawn = new Map<number, { g: SVGGElement; fill: SVGRectElement; label: SVGTextElement; bar: SVGRectElement }>();
  const page: Page = {
    title: `Graph of #${id}`,
    el: h('div', { class: 'graph' }, h('div', { class: 'job-head' }, h('h1', {}, `Graph of job #${id}`), h('a', { href: `#/job/${id}`, class: 'button' }, 'Job'), fit, legend()), info, canvas),
    intervalMs: 2000,
    loaded: false,
    async refresh() {
      const g = await api.get<Graph>(`graph/${id}`);
      const next = JSON.stringify([g.nodes.map((n) => [n.id, n.parentId]), g.edges]);
      if (next !== shape) {
        // A large graph's layout takes seconds, off the page's thread: say what is happening.
        if (!drawn.size) info.textContent = `Laying out ${g.nodes.length.toLocaleString()} jobs…`;
        try {
          replace(canvas, await draw(g, id, drawn));
          shape = next;
        } catch (err) {
          // The layout worker did not load or broke: said where the drawing goes; the next refresh tries again.
          replace(canvas, h('p', { class: 'error-text', id: 'graph-error' }, `Could not lay out the graph: ${(err as Error)?.message ?? String(err)}. Trying again…`));
          info.textContent = '';
          page.loaded = true;
          return;
        }
      }
      // A container rolls up from its children: its bar shows the share of them done.
      const kids = new Map<number, { done: number; total: number }>();
      for (const n of g.nodes) {
        if (n.parentId === null) continue;
        const k = kids.get(n.parentId) ?? { done: 0, total: 0 };
        k.total++;
        if (n.state === 'done') k.done++;
        kids.set(n.parentId, k);
      }
      for (const n of g.nodes) {
        const k = kids.get(n.id);
        update(drawn.get(n.id), k ? { ...n, progress: Math.round((100 * k.done) / k.total), stage: `${k.done}/${k.total} children done` } : n, !!k);
      }
      const done = g.nodes.filter((n) => n.state === 'done').length;
      const lenient = g.edges.filter((e) => e.allowFailure).length;
      const dashed = lenient ? ` (${lenient} dashed: they allow failure, the dependent runs however its upstream ends)` : '';
      info.textContent = `${g.nodes.length} jobs, ${g.edges.length} dependencies${dashed}, ${done} done${g.truncated ? ' (truncated: the graph is larger than shown)' : ''}.`;
      page.loaded = true;
    },
  };
  return page;
}

function legend(): HTMLElement {
  return h('span', { class: 'legend' }, ...['waiting', 'ready', 'running', 'done', 'failed', 'cancelled'].map((st) => h('span', { class: `badge st-${st}` }, st)));
}

async function draw(g: Graph, rootId: number, drawn: Map<number, unknown>): Promise<SVGSVGElement> {
  drawn.clear();
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const elkNodes = new Map<number, ElkNode>();
  // ELK reads this per level of the hierarchy: the root and every container get it.
  const levelOptions: Record<string, string> =
    g.nodes.length > LARGE_GRAPH || widestFan(g.edges) > MERGE_FAN
      ? // A job's edges share one trunk: routed edge by edge, each took a channel of its own
        // between two layers (a 1 → 1,000 fan-out: 15,000 px of vertical lines; ten layers of
        // 100 jobs, 5 edges each: 37,000 px) and the layout took 2-5× as long. In a small graph
        // without a wide fan, separate edges keep a fan's jobs in id order (merged, any order is as good).
        { 'elk.layered.mergeEdges': 'true' }
      : {};
  for (const n of g.nodes) {
    elkNodes.set(n.id, {
      id: String(n.id),
      width: NODE_W,
      height: NODE_H,
      children: [],
      edges: [],
      layoutOptions: n.isContainer ? { 'elk.padding': '[top=50,left=14,bottom=14,right=14]', ...levelOptions } : {},
    });
  }
  const root: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.layered.spacing.nodeNodeBetweenLayers': '48',
      'elk.spacing.nodeNode': '16',
      'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
      ...levelOptions,
      // ELK's default (7) repeats crossing minimization: seconds for a 1,000-job graph.
      ...(g.nodes.length > LARGE_GRAPH ? { 'elk.layered.thoroughness': '2' } : {}),
      'elk.json.shapeCoords': 'ROOT',
      'elk.json.edgeCoords': 'ROOT',
    },
    children: [],
    edges: [],
  };
  for (const n of g.nodes) {
    const parent = n.parentId !== null ? elkNodes.get(n.parentId) : undefined;
    (parent ?? root).children!.push(elkNodes.get(n.id)!);
  }
  // Containers size to their children: drop the fixed size of those that have any.
  for (const n of elkNodes.values()) if (n.children!.length) delete n.width, delete n.height;
  const ancestors = (id: number): number[] => {
    const out: number[] = [];
    for (let p = byId.get(id)?.parentId ?? null; p !== null && byId.has(p); p = byId.get(p)!.parentId) out.push(p);
    return out;
  };
  const lenient = new Set<string>();
  g.edges.forEach((e, i) => {
    // An edge lives in the lowest container holding both ends.
    const up = new Set(ancestors(e.from));
    const common = ancestors(e.to).find((a) => up.has(a));
    const holder = common !== undefined ? elkNodes.get(common)! : root;
    holder.edges!.push({ id: `e${i}`, sources: [String(e.from)], targets: [String(e.to)] } as ElkExtendedEdge);
    if (e.allowFailure) lenient.add(`e${i}`);
  });
  const laid = await layOut(root);
  const W = Math.ceil((laid.width ?? 0) + 20);
  const H = Math.ceil((laid.height ?? 0) + 20);
  const svg = s('svg', { width: W, height: H, viewBox: `-10 -10 ${W} ${H}`, class: 'dag', id: 'dag' });
  svg.append(s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow-head' }))));
  const boxes = s('g', {});
  const lines = s('g', {});
  const leaves = s('g', {});
  const visit = (node: ElkNode) => {
    for (const e of (node.edges ?? []) as ElkExtendedEdge[]) {
      for (const sec of e.sections ?? []) {
        const pts = [sec.startPoint, ...(sec.bendPoints ?? []), sec.endPoint];
        const d = pts.map((p, i) => `${i ? 'L' : 'M'}${p.x},${p.y}`).join(' ');
        lines.append(s('path', { d, class: lenient.has(e.id) ? 'edge allow-failure' : 'edge', 'marker-end': 'url(#arrow)' }));
      }
    }
    for (const c of node.children ?? []) {
      const job = byId.get(Number(c.id))!;
      const box = nodeShape(job, c, job.id === rootId, (c.children ?? []).length > 0);
      ((c.children ?? []).length ? boxes : leaves).append(box.g);
      drawn.set(job.id, box);
      visit(c);
    }
  };
  visit(laid);
  svg.append(boxes, lines, leaves);
  return svg;
}

function nodeShape(job: GraphNode, n: ElkNode, isRoot: boolean, hasChildren: boolean) {
  const x = n.x ?? 0;
  const y = n.y ?? 0;
  const w = n.width ?? NODE_W;
  const hgt = n.height ?? NODE_H;
  const g = s('g', { class: `node${hasChildren ? ' container' : ''}${isRoot ? ' root' : ''}`, 'data-id': job.id, 'data-state': job.state, tabindex: 0, role: 'link' });
  g.addEventListener('click', (ev) => {
    ev.stopPropagation();
    location.hash = `#/job/${job.id}`;
  });
  g.addEventListener('keydown', (ev) => {
    if ((ev as KeyboardEvent).key === 'Enter') location.hash = `#/job/${job.id}`;
  });
  const fill = s('rect', { x, y, width: w, height: hgt, rx: hasChildren ? 10 : 6, class: 'node-box' });
  const name = clip(job.ref ?? job.type, hasChildren ? 40 : 22);
  const title = s('text', { x: x + 8, y: y + 17, class: 'node-title' }, name);
  const label = s('text', { x: x + 8, y: y + 33, class: 'node-sub' });
  const track = s('rect', { x: x + 8, y: hasChildren ? y + 40 : y + hgt - 9, width: Math.min(w, NODE_W) - 16, height: 4, rx: 2, class: 'node-track' });
  const bar = s('rect', { x: x + 8, y: hasChildren ? y + 40 : y + hgt - 9, width: 0, height: 4, rx: 2, class: 'node-bar' });
  g.append(s('title', {}, `#${job.id} ${job.type}${job.ref ? ` (${job.ref})` : ''}`), fill, title, label, track, bar);
  const shape = { g, fill, label, bar, barWidth: Math.min(w, NODE_W) - 16 };
  update(shape, job);
  return shape;
}

function update(shape: { g: SVGGElement; label: SVGTextElement; bar: SVGRectElement; barWidth?: number } | undefined, job: GraphNode, container = false): void {
  if (!shape) return;
  if (container) {
    shape.g.setAttribute('data-state', job.state);
    shape.g.setAttribute('class', shape.g.getAttribute('class')!.replace(/ ?st-\w+/g, '') + ` st-${job.state}`);
    shape.label.textContent = `#${job.id} · ${job.state} · ${job.stage}`;
    shape.bar.setAttribute('width', String(((shape.barWidth ?? NODE_W - 16) * job.progress) / 100));
    return;
  }
  shape.g.setAttribute('data-state', job.state);
  shape.g.setAttribute('class', shape.g.getAttribute('class')!.replace(/ ?st-\w+/g, '') + ` st-${job.state}`);
  shape.label.textContent = clip(`#${job.id} · ${job.state}${job.state === 'running' || (job.progress > 0 && job.progress < 100) ? ` ${job.progress}%` : ''}${job.stage && job.state === 'running' ? ` · ${job.stage}` : ''}`, 30);
  shape.bar.setAttribute('width', String(((shape.barWidth ?? NODE_W - 16) * Math.max(0, Math.min(100, job.progress))) / 100));
}

function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

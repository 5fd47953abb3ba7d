import {
  DependencyCycleError,
  DuplicateRefError,
  InvalidJobError,
  ParentCycleError,
  ParentDependencyConflictError,
  SelfDependencyError,
  UnknownDependencyError,
  UnknownParentError,
} from '../errors';
import { isStorableText, STORABLE_TEXT } from '../options/storable-text';

/**
 * A dependency that does not need its upstream to succeed: the dependent runs once the upstream
 * finishes, done, failed or cancelled (a cleanup, a report of what happened, a notification).
 */
export interface LenientDependency {
  /** A ref of this graph, or the id of an existing job. */
  job: string | number;
  /** `true`: the upstream failing or being cancelled does not cancel this job; it runs anyway. */
  allowFailure?: boolean;
}

export type Dependency = string | number | LenientDependency;

export interface GraphNodeShape {
  ref: string;
  dependsOn?: ReadonlyArray<Dependency>;
  parent?: string;
}

/** One node after validation; references are indices into the input array. */
export interface PlannedNode {
  ref: string;
  /** Indices of in-graph nodes this node waits for, its containers' dependencies included. */
  depIndices: number[];
  /** Ids of existing jobs this node waits for, its containers' dependencies included. */
  depIds: number[];
  parentIndex: number | null;
  isContainer: boolean;
  childCount: number;
  /**
   * The dependencies of depIndices/depIds that allow failure (`allowFailure: true`), only when the
   * node has any: a dependency named both ways, or inherited strict from a container, is strict.
   */
  lenient?: { indices: ReadonlySet<number>; ids: ReadonlySet<number> };
}

export const MAX_REF_LENGTH = 200;

/**
 * Validates a graph's structure and resolves it to indices. Pure: no database.
 *
 * Containers hand their dependencies down to their children (a child cannot start before its
 * container's upstreams are done), and a container waits for its children. The cycle check
 * therefore runs on the "waits for" relation: node → dependency, and container → child, so a
 * deadlock through a container is reported like any other cycle, with its path.
 */
export function validateGraph(nodes: readonly GraphNodeShape[]): PlannedNode[] {
  const indexOf = new Map<string, number>();
  nodes.forEach((node, i) => {
    const ref = node?.ref;
    if (typeof ref !== 'string' || ref.length === 0 || ref.length > MAX_REF_LENGTH || !isStorableText(ref)) {
      throw new InvalidJobError('ref', `a non-empty string of at most ${MAX_REF_LENGTH} characters ${STORABLE_TEXT}`, ref, `#${i}`);
    }
    if (indexOf.has(ref)) throw new DuplicateRefError(ref);
    indexOf.set(ref, i);
  });

  const parentOf = nodes.map((node) => {
    if (node.parent === undefined || node.parent === null) return null;
    if (typeof node.parent !== 'string') {
      throw new InvalidJobError('parent', 'the ref (a string) of a container node in this graph', node.parent, node.ref);
    }
    const p = indexOf.get(node.parent);
    if (p === undefined) throw new UnknownParentError(node.ref, node.parent);
    return p;
  });
  checkParentChains(nodes, parentOf);

  const ownIndices: number[][] = [];
  const ownIds: number[][] = [];
  // Per node with any: its own dependencies that allow failure (strict ones are left out).
  const ownLenient = new Map<number, { indices: Set<number>; ids: Set<number> }>();
  nodes.forEach((node, i) => {
    const deps = node.dependsOn ?? [];
    if (!Array.isArray(deps)) {
      throw new InvalidJobError('dependsOn', 'an array of refs (strings) or job ids (integers)', deps, node.ref);
    }
    const indices = new Set<number>();
    const ids = new Set<number>();
    let lenient: { indices: Set<number>; ids: Set<number> } | undefined;
    for (const entry of deps) {
      const { dep, allowFailure } = unwrapDependency(entry, node.ref);
      if (typeof dep === 'string') {
        const d = indexOf.get(dep);
        if (d === undefined) throw new UnknownDependencyError(node.ref, dep);
        if (d === i) throw new SelfDependencyError(node.ref);
        indices.add(d);
        if (allowFailure) (lenient ??= { indices: new Set(), ids: new Set() }).indices.add(d);
      } else if (typeof dep === 'number' && Number.isSafeInteger(dep) && dep > 0) {
        ids.add(dep);
        if (allowFailure) (lenient ??= { indices: new Set(), ids: new Set() }).ids.add(dep);
      } else {
        throw new InvalidJobError('dependsOn', 'refs (strings) or job ids (positive integers)', dep, node.ref);
      }
    }
    ownIndices.push([...indices]);
    ownIds.push([...ids]);
    // Only a node with a lenient entry reads its entries again, for strict mentions of the same
    // dependency: the common node allocates nothing more (a 1,000,000-node graph, no Set per node).
    if (lenient) {
      for (const entry of deps) {
        const { dep, allowFailure } = unwrapDependency(entry, node.ref);
        if (allowFailure) continue;
        if (typeof dep === 'string') lenient.indices.delete(indexOf.get(dep)!);
        else lenient.ids.delete(dep as number);
      }
      if (lenient.indices.size || lenient.ids.size) ownLenient.set(i, lenient);
    }
  });

  // A dependency on one's own container, or a container's on its own descendant, can never resolve.
  const ancestors = nodes.map((_, i) => ancestorsOf(i, parentOf));
  nodes.forEach((node, i) => {
    for (const d of ownIndices[i]) {
      if (ancestors[i].includes(d)) throw new ParentDependencyConflictError(node.ref, nodes[d].ref, 'ancestor');
      if (ancestors[d].includes(i)) throw new ParentDependencyConflictError(node.ref, nodes[d].ref, 'descendant');
    }
  });

  const childCount = new Array<number>(nodes.length).fill(0);
  parentOf.forEach((p) => {
    if (p !== null) childCount[p]++;
  });

  const planned: PlannedNode[] = nodes.map((node, i) => {
    const depIndices = new Set(ownIndices[i]);
    const depIds = new Set(ownIds[i]);
    for (const a of ancestors[i]) {
      ownIndices[a].forEach((d) => depIndices.add(d));
      ownIds[a].forEach((d) => depIds.add(d));
    }
    const planned: PlannedNode = {
      ref: node.ref,
      depIndices: [...depIndices],
      depIds: [...depIds],
      parentIndex: parentOf[i],
      isContainer: childCount[i] > 0,
      childCount: childCount[i],
    };
    if (ownLenient.size) {
      const lenient = inheritedLenience(i, ancestors[i], ownIndices, ownIds, ownLenient);
      if (lenient) planned.lenient = lenient;
    }
    return planned;
  });

  const cycle = findCycle(planned);
  if (cycle) throw new DependencyCycleError(cycle.map((i) => nodes[i].ref));
  return planned;
}

/** A `dependsOn` entry as the dependency and whether it allows failure; a clear error for any other shape. */
function unwrapDependency(entry: unknown, ref: string): { dep: unknown; allowFailure: boolean } {
  if (entry === null || typeof entry !== 'object') return { dep: entry, allowFailure: false };
  const expected = 'a ref (string), a job id (integer), or { job, allowFailure?: boolean }';
  if (Array.isArray(entry) || Object.getPrototypeOf(entry) !== Object.prototype) throw new InvalidJobError('dependsOn', expected, entry, ref);
  const { job, allowFailure, ...rest } = entry as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) throw new InvalidJobError('dependsOn', `${expected}; unknown field '${unknown[0]}'`, entry, ref);
  if (typeof job !== 'string' && typeof job !== 'number') throw new InvalidJobError('dependsOn', `${expected}; 'job' is required`, entry, ref);
  if (allowFailure !== undefined && typeof allowFailure !== 'boolean') {
    throw new InvalidJobError('dependsOn', `${expected}; 'allowFailure' must be true or false`, entry, ref);
  }
  return { dep: job, allowFailure: allowFailure === true };
}

/**
 * The lenient dependencies of node `i`: its own and those its containers hand down, less every
 * dependency that any of them (the node or a container) names strict. Undefined when none is left.
 */
function inheritedLenience(
  i: number,
  ancestors: readonly number[],
  ownIndices: readonly number[][],
  ownIds: readonly number[][],
  ownLenient: ReadonlyMap<number, { indices: Set<number>; ids: Set<number> }>,
): PlannedNode['lenient'] {
  const owners = [i, ...ancestors];
  const indices = new Set<number>();
  const ids = new Set<number>();
  for (const o of owners) {
    ownLenient.get(o)?.indices.forEach((d) => indices.add(d));
    ownLenient.get(o)?.ids.forEach((d) => ids.add(d));
  }
  if (!indices.size && !ids.size) return undefined;
  for (const o of owners) {
    const lenient = ownLenient.get(o);
    for (const d of ownIndices[o]) if (!lenient?.indices.has(d)) indices.delete(d);
    for (const d of ownIds[o]) if (!lenient?.ids.has(d)) ids.delete(d);
  }
  return indices.size || ids.size ? { indices, ids } : undefined;
}

function ancestorsOf(i: number, parentOf: readonly (number | null)[]): number[] {
  const out: number[] = [];
  for (let p = parentOf[i]; p !== null; p = parentOf[p]) out.push(p);
  return out;
}

function checkParentChains(nodes: readonly GraphNodeShape[], parentOf: readonly (number | null)[]): void {
  const settled = new Uint8Array(nodes.length); // 1 = known to reach a root
  for (let start = 0; start < nodes.length; start++) {
    const path: number[] = [];
    const onPath = new Set<number>();
    let cur: number | null = start;
    while (cur !== null && !settled[cur]) {
      if (onPath.has(cur)) {
        const loop = path.slice(path.indexOf(cur)).concat(cur);
        throw new ParentCycleError(loop.map((i) => nodes[i].ref));
      }
      onPath.add(cur);
      path.push(cur);
      cur = parentOf[cur];
    }
    path.forEach((i) => (settled[i] = 1));
  }
}

/** Iterative DFS over "waits for" edges; returns a cycle's node indices (first = last), or null. */
function findCycle(planned: readonly PlannedNode[]): number[] | null {
  const waitsFor: number[][] = planned.map((n) => [...n.depIndices]);
  planned.forEach((n, i) => {
    if (n.parentIndex !== null) waitsFor[n.parentIndex].push(i);
  });
  const WHITE = 0;
  const GREY = 1;
  const BLACK = 2;
  const color = new Uint8Array(planned.length);
  const next = new Uint32Array(planned.length); // per node: next edge to explore
  for (let root = 0; root < planned.length; root++) {
    if (color[root] !== WHITE) continue;
    const stack = [root];
    color[root] = GREY;
    while (stack.length) {
      const v = stack[stack.length - 1];
      if (next[v] < waitsFor[v].length) {
        const w = waitsFor[v][next[v]++];
        if (color[w] === GREY) return stack.slice(stack.indexOf(w)).concat(w);
        if (color[w] === WHITE) {
          color[w] = GREY;
          stack.push(w);
        }
      } else {
        color[v] = BLACK;
        stack.pop();
      }
    }
  }
  return null;
}

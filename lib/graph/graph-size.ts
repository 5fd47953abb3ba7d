import { GraphTooLargeError } from '../errors';
import type { GraphNode } from '../job.types';

export interface GraphSizeLimits {
  maxGraphNodes: number;
  maxGraphDependencies: number;
}

/**
 * Rejects a graph over the configured size before any work is done on it: counting is O(nodes),
 * and the error names the limit and the option that raises it. Malformed `dependsOn` values are
 * left to the validation that follows.
 */
export function assertGraphSize(nodes: readonly GraphNode[], limits: GraphSizeLimits): void {
  if (nodes.length > limits.maxGraphNodes) throw new GraphTooLargeError('nodes', nodes.length, limits.maxGraphNodes, 'maxGraphNodes');
  let edges = 0;
  for (const node of nodes) {
    const deps = (node as { dependsOn?: unknown } | null)?.dependsOn;
    if (Array.isArray(deps)) edges += deps.length;
  }
  if (edges > limits.maxGraphDependencies) {
    throw new GraphTooLargeError('dependencies', edges, limits.maxGraphDependencies, 'maxGraphDependencies');
  }
}

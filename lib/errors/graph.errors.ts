import { boundedList } from './bounded-list';
import { JobQueueError } from './job-queue.error';

/** Base of every error raised while validating `enqueueGraph` input. Nothing was written. */
export abstract class GraphValidationError extends JobQueueError {}

/** Two nodes of one graph share a ref. */
export class DuplicateRefError extends GraphValidationError {
  readonly code = 'GRAPH_DUPLICATE_REF';
  constructor(readonly ref: string) {
    super(`Graph: ref "${ref}" is used by more than one node; refs must be unique within a graph.`);
  }
}

/** Two nodes of one graph share a dedup `key`: one key names one job. */
export class DuplicateKeyError extends GraphValidationError {
  readonly code = 'GRAPH_DUPLICATE_KEY';
  constructor(
    readonly key: string,
    readonly refs: readonly [string, string],
  ) {
    super(`Graph: nodes "${refs[0]}" and "${refs[1]}" have the same key ${JSON.stringify(key)}; a key names one job, so it must be unique within a graph.`);
  }
}

/** `dependsOn` names a ref that is not in the graph. */
export class UnknownDependencyError extends GraphValidationError {
  readonly code = 'GRAPH_UNKNOWN_DEPENDENCY';
  constructor(
    readonly ref: string,
    readonly dependency: string,
  ) {
    super(
      `Graph: node "${ref}" depends on "${dependency}", which is not a ref in this graph. ` +
        `Use a ref of this graph, or a numeric id to depend on an existing job.`,
    );
  }
}

/** A node lists itself in `dependsOn`. */
export class SelfDependencyError extends GraphValidationError {
  readonly code = 'GRAPH_SELF_DEPENDENCY';
  constructor(readonly ref: string) {
    super(`Graph: node "${ref}" depends on itself.`);
  }
}

/** The nodes wait for each other in a loop; `path` lists it, first ref repeated last. */
export class DependencyCycleError extends GraphValidationError {
  readonly code = 'GRAPH_CYCLE';
  constructor(readonly path: readonly string[]) {
    super(`Graph: dependency cycle ${boundedList(path, ' -> ', 20, String, true)}; a job graph must be acyclic.`);
  }
}

/** `parent` names a ref that is not in the graph. */
export class UnknownParentError extends GraphValidationError {
  readonly code = 'GRAPH_UNKNOWN_PARENT';
  constructor(
    readonly ref: string,
    readonly parent: string,
  ) {
    super(`Graph: node "${ref}" has parent "${parent}", which is not a ref in this graph.`);
  }
}

/** Following `parent` from a node comes back to it; `path` lists the loop. */
export class ParentCycleError extends GraphValidationError {
  readonly code = 'GRAPH_PARENT_CYCLE';
  constructor(readonly path: readonly string[]) {
    super(`Graph: parent chain ${boundedList(path, ' -> ', 20, String, true)} loops; a container cannot be its own descendant.`);
  }
}

/** A node depends on its own container (or a container on its own descendant): both would wait forever. */
export class ParentDependencyConflictError extends GraphValidationError {
  readonly code = 'GRAPH_PARENT_DEPENDENCY_CONFLICT';
  constructor(
    readonly ref: string,
    readonly other: string,
    readonly relation: 'ancestor' | 'descendant',
  ) {
    super(
      relation === 'ancestor'
        ? `Graph: node "${ref}" depends on its own container "${other}", which finishes only after "${ref}" does.`
        : `Graph: container "${ref}" depends on its own descendant "${other}"; its children inherit its dependencies, so "${other}" would wait for itself.`,
    );
  }
}

/** A numeric dependency names a job id that does not exist. */
export class MissingUpstreamJobError extends GraphValidationError {
  readonly code = 'GRAPH_MISSING_UPSTREAM';
  constructor(readonly ids: readonly number[]) {
    super(`Graph: dependencies on job id${ids.length > 1 ? 's' : ''} ${boundedList(ids, ', ', 20)} that do not exist.`);
  }
}

/** A dependency (numeric id, or an existing job matched by key) already failed or was cancelled. */
export class FailedUpstreamJobError extends GraphValidationError {
  readonly code = 'GRAPH_FAILED_UPSTREAM';
  constructor(
    readonly id: number,
    readonly state: string,
  ) {
    super(`Graph: dependency on job ${id}, which is ${state}; retry it first or drop the dependency.`);
  }
}

/** A new node names, as parent, a node whose key matched an existing job. */
export class ExistingParentError extends GraphValidationError {
  readonly code = 'GRAPH_EXISTING_PARENT';
  constructor(
    readonly ref: string,
    readonly parent: string,
  ) {
    super(
      `Graph: node "${ref}" has parent "${parent}", whose key matched a job that already exists; ` +
        `children cannot be added to an existing container.`,
    );
  }
}

/**
 * A graph over the configured size: rejected before anything is read or written, because every
 * node and edge is held in memory (about 1 KB per node while enqueueing) and written in one
 * transaction.
 */
export class GraphTooLargeError extends GraphValidationError {
  readonly code = 'GRAPH_TOO_LARGE';
  constructor(
    readonly what: 'nodes' | 'dependencies',
    readonly count: number,
    readonly limit: number,
    readonly option: 'maxGraphNodes' | 'maxGraphDependencies',
  ) {
    super(
      `Graph: ${count.toLocaleString('en')} ${what} is over the limit of ${limit.toLocaleString('en')} per enqueue ` +
        `(option ${option}). Raise ${option} in JobQueueModule.forRoot() if the process has the memory for it, ` +
        `or enqueue the graph in parts, later parts depending on earlier ones by job id.`,
    );
  }
}

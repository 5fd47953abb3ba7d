import { boundedList } from './bounded-list';
import { JobQueueError } from './job-queue.error';

/** One problem a `@JobHandler` schema found in a job's args. */
export interface JobArgsIssue {
  /** The graph ref of the node (`enqueueGraph`), absent for `enqueue` and in the worker. */
  ref?: string;
  type: string;
  /** Where in `args`, e.g. `args.items[2].sku`; `args` for the value itself. */
  path: string;
  message: string;
}

/**
 * `args` failed the Standard Schema of their type's `@JobHandler`. At enqueue nothing was written
 * (a graph is rejected whole); in a worker the job fails for good (the same args would fail again).
 */
export class JobArgsInvalidError extends JobQueueError {
  readonly code = 'JOB_ARGS_INVALID';

  constructor(readonly issues: readonly JobArgsIssue[]) {
    super(
      `Invalid job args (${issues.length} issue${issues.length === 1 ? '' : 's'}): ` +
        boundedList(issues, '; ', 10, (i) => `${i.ref === undefined ? '' : `"${i.ref}" `}(${i.type}) ${i.path}: ${i.message}`) +
        '. Fix the args to match the schema given to @JobHandler.',
    );
  }
}

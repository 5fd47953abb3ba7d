import { Scope, type FactoryProvider } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { JobQueueError } from '../errors/job-queue.error';
import type { JobArgs } from '../typing/job-types';
import type { JobContext } from './job-context';

/**
 * Injection token of the current job in a request- or transient-scoped handler provider (and in
 * the scoped providers it depends on): `@Inject(JOB_REF) job: JobRef<'render'>`.
 */
export const JOB_REF = Symbol('JOB_REF');

/** The job a scoped provider was created for. */
export interface JobRef<T extends string = string> {
  readonly id: number;
  readonly type: T;
  /** The args the handler receives (after its schema, if any). */
  readonly args: JobArgs<T>;
  /** The handler's context: attempt, signal, progress, upstream, log. */
  readonly context: JobContext<T>;
}

/** What the queue registers as the "request" of the DI sub-tree it builds for one job. */
export class JobRequest {
  constructor(readonly job: JobRef) {}
}

/** `JOB_REF` resolved outside a job: in an HTTP request, or with `moduleRef.resolve()` of your own. */
export class JobRefOutsideJobError extends JobQueueError {
  readonly code = 'JOB_REF_OUTSIDE_JOB';
  constructor() {
    super(
      'JOB_REF was injected outside a job. It exists only in providers the queue creates for a job: a request- or ' +
        'transient-scoped provider with a @JobHandler method, and the scoped providers it injects. Do not inject ' +
        'it into providers that HTTP requests or your own moduleRef.resolve() calls create.',
    );
  }
}

/** Provides `JOB_REF` from the job's DI sub-tree (request-scoped, so it is resolved per job). */
export const jobRefProvider: FactoryProvider = {
  provide: JOB_REF,
  scope: Scope.REQUEST,
  inject: [REQUEST],
  useFactory: (request: unknown): JobRef => {
    if (!(request instanceof JobRequest)) throw new JobRefOutsideJobError();
    return request.job;
  },
};

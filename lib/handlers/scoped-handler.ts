import type { ModuleRef } from '@nestjs/core';
import { ContextIdFactory } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import type { JobContext } from './job-context';
import { JobRequest } from './job-ref';
import type { JobHandlerFn } from './job-handler.registry';

/**
 * The handler of a request- or transient-scoped provider: each job gets its own DI sub-tree
 * (a context id per job, as Nest builds one per HTTP request), whose "request" is the job, so
 * `JOB_REF` and `REQUEST` resolve to it. Singleton handlers never come here.
 */
export function scopedHandler(moduleRef: ModuleRef, wrapper: InstanceWrapper, method: string): JobHandlerFn {
  return async (args, ctx) => {
    const context = ctx as JobContext;
    const request = new JobRequest({ id: context.id, type: context.type, args, context });
    // getByRequest, not create: an app-wide ContextIdStrategy (durable providers, e.g. per tenant
    // from `request.job.context.group`) applies to jobs as it does to HTTP requests.
    const contextId = ContextIdFactory.getByRequest(request);
    moduleRef.registerRequestByContextId(request, contextId);
    const instance = await moduleRef.resolve<Record<string, (args: unknown, ctx: unknown) => unknown>>(wrapper.token as never, contextId, {
      strict: false,
    });
    return instance[method](args, ctx);
  };
}

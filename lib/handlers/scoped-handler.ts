import type { ModuleRef } from '@nestjs/core';
import { ContextIdFactory } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import type { JobContext } from './job-context';
import { JobRequest } from './job-ref';
import type { JobHandlerFn } from './job-handler.registry';

/**
 * The handler of a request- or transient-scoped provider: each job gets its own DI sub-tree
 * (a fresh context id, as Nest builds one per HTTP request), whose "request" is the job, so
 * `JOB_REF` and `REQUEST` resolve to it. Singleton handlers never come here.
 */
export function scopedHandler(moduleRef: ModuleRef, wrapper: InstanceWrapper, method: string): JobHandlerFn {
  return async (args, ctx) => {
    const context = ctx as JobContext;
    const contextId = ContextIdFactory.create();
    moduleRef.registerRequestByContextId(new JobRequest({ id: context.id, type: context.type, args, context }), contextId);
    const instance = await moduleRef.resolve<Record<string, (args: unknown, ctx: unknown) => unknown>>(wrapper.token as never, contextId, {
      strict: false,
    });
    return instance[method](args, ctx);
  };
}

import { SetMetadata } from '@nestjs/common';
import type { JobEventName } from './job-event.types';

export const JOB_EVENT_METADATA = 'nestjs-sql-job-queue:on-job-event';

/**
 * Marks a provider method as a listener of a job lifecycle event:
 * `@OnJobEvent('failed') onFailed(job: JobView, detail: JobEventDetail) {}`. It runs in the
 * process that committed the change, after the commit, off the claim and finalize paths; what it
 * throws (or rejects with) is logged and changes nothing. Local, at-most-once notifications:
 * not a second queue (use a job for work that must happen).
 */
export function OnJobEvent(event: JobEventName): MethodDecorator {
  return (target, key, descriptor) => {
    const previous = (Reflect.getMetadata(JOB_EVENT_METADATA, descriptor.value as object) as JobEventName[] | undefined) ?? [];
    SetMetadata(JOB_EVENT_METADATA, [...previous, event])(target, key, descriptor);
  };
}

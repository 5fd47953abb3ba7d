import { SetMetadata } from '@nestjs/common';
import { JOB_HANDLER_METADATA } from '../job-queue.constants';

export interface JobHandlerOptions {
  /** Per-attempt timeout for jobs of this type (unless the job sets its own). */
  timeoutMs?: number;
  /** Attempts for jobs of this type (unless the job sets its own). */
  maxAttempts?: number;
  /** At most this many jobs of this type at once in this process. */
  concurrency?: number;
}

export interface JobHandlerMetadata {
  type: string;
  options: JobHandlerOptions;
}

/**
 * Marks a provider method as the handler of a job type:
 * `async (args, ctx: JobContext) => result`. The result is stored as JSON with `done`.
 */
export function JobHandler(type: string, options: JobHandlerOptions = {}): MethodDecorator {
  return SetMetadata<string, JobHandlerMetadata>(JOB_HANDLER_METADATA, { type, options });
}

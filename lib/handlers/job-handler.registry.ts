import { Injectable } from '@nestjs/common';
import type { JobHandlerOptions } from './job-handler.decorator';
import { DuplicateJobHandlerError } from './job-handler.errors';

export type JobHandlerFn = (args: unknown, ctx: unknown) => unknown;

export interface RegisteredJobHandler {
  type: string;
  options: JobHandlerOptions;
  /** `Class.method`, for messages. */
  name: string;
  handle: JobHandlerFn;
}

/** The job types this process can run, filled by the explorer at module init. */
@Injectable()
export class JobHandlerRegistry {
  private readonly handlers = new Map<string, RegisteredJobHandler>();

  register(handler: RegisteredJobHandler): void {
    const existing = this.handlers.get(handler.type);
    if (existing) throw new DuplicateJobHandlerError(handler.type, existing.name, handler.name);
    this.handlers.set(handler.type, handler);
  }

  get(type: string): RegisteredJobHandler | undefined {
    return this.handlers.get(type);
  }

  types(): string[] {
    return [...this.handlers.keys()];
  }
}

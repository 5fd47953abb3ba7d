import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { JOB_HANDLER_METADATA } from '../job-queue.constants';
import type { JobHandlerMetadata, JobHandlerOptions } from './job-handler.decorator';
import { InvalidJobHandlerError } from './job-handler.errors';
import { JobHandlerRegistry } from './job-handler.registry';

/** Finds `@JobHandler` methods on every provider and registers them, once, at module init. */
@Injectable()
export class JobHandlerExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly registry: JobHandlerRegistry,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const { instance } = wrapper;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance);
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const meta = this.reflector.get<JobHandlerMetadata | undefined>(JOB_HANDLER_METADATA, prototype[method]);
        if (!meta) continue;
        const name = `${instance.constructor?.name ?? 'provider'}.${method}`;
        validateHandler(name, meta);
        const fn = prototype[method] as (args: unknown, ctx: unknown) => unknown;
        this.registry.register({ type: meta.type, options: meta.options, name, handle: fn.bind(instance) });
      }
    }
  }
}

function validateHandler(name: string, meta: JobHandlerMetadata): void {
  if (typeof meta.type !== 'string' || meta.type.length === 0 || meta.type.length > 200) {
    throw new InvalidJobHandlerError(name, 'the job type must be a non-empty string of at most 200 characters.');
  }
  const checks: Array<[keyof JobHandlerOptions, number, number]> = [
    ['timeoutMs', 1, 2_147_483_647],
    ['maxAttempts', 1, 1_000_000],
    ['concurrency', 1, 10_000],
  ];
  for (const [key, min, max] of checks) {
    const v = meta.options[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)) {
      throw new InvalidJobHandlerError(name, `option "${key}" must be an integer from ${min} to ${max}; received ${String(v)}.`);
    }
  }
}

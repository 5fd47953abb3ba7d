import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import { JOB_HANDLER_METADATA } from '../job-queue.constants';
import type { JobHandlerMetadata, JobHandlerOptions } from './job-handler.decorator';
import { InvalidJobHandlerError } from './job-handler.errors';
import { JobHandlerRegistry } from './job-handler.registry';
import { scopedHandler } from './scoped-handler';
import { isStandardSchema } from '../typing/standard-schema';
import { withArgsSchema } from '../validation/validated-handler';

/** Finds `@JobHandler` methods on every provider and registers them, once, at module init. */
@Injectable()
export class JobHandlerExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly registry: JobHandlerRegistry,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const { instance } = wrapper;
      // Request- or transient-scoped providers get an instance per job (scopedHandler).
      const scoped = !wrapper.isDependencyTreeStatic() || wrapper.isTransient;
      const prototype = scoped ? (wrapper.metatype as { prototype?: object } | null)?.prototype : instance && Object.getPrototypeOf(instance);
      if (!prototype || typeof prototype !== 'object' || (!scoped && typeof instance !== 'object')) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const meta = this.reflector.get<JobHandlerMetadata | undefined>(JOB_HANDLER_METADATA, prototype[method]);
        if (!meta) continue;
        const name = `${(prototype as { constructor?: { name?: string } }).constructor?.name ?? 'provider'}.${method}`;
        validateHandler(name, meta);
        const fn = prototype[method] as (args: unknown, ctx: unknown) => unknown;
        const handle = scoped ? scopedHandler(this.moduleRef, wrapper, method) : fn.bind(instance);
        const { schema } = meta.options;
        this.registry.register({ type: meta.type, options: meta.options, name, handle: schema ? withArgsSchema(meta.type, schema, handle) : handle });
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
  if (meta.options.schema !== undefined && !isStandardSchema(meta.options.schema)) {
    throw new InvalidJobHandlerError(
      name,
      'option "schema" must be a Standard Schema v1 validator (an object with a "~standard" property of version 1, ' +
        'as zod 3.24+, valibot 1+ and arktype 2+ provide).',
    );
  }
  for (const [key, min, max] of checks) {
    const v = meta.options[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)) {
      throw new InvalidJobHandlerError(name, `option "${key}" must be an integer from ${min} to ${max}; received ${String(v)}.`);
    }
  }
}

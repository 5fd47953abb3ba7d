import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { RECURRING_METADATA } from '../job-queue.constants';
import { InvalidScheduleError } from '../errors';
import { defineSchedule, type ScheduleDefinition, type ScheduleInput } from './schedule-definition';

/**
 * Finds `@Recurring` methods on every provider at module init and checks them (cron, time zone,
 * backfill): a bad one fails start-up with an InvalidScheduleError naming it. The method itself
 * is registered as a handler by the JobHandlerExplorer (`@Recurring` sets `@JobHandler` too).
 */
@Injectable()
export class RecurringExplorer implements OnModuleInit {
  private found: ScheduleDefinition[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  /** The decorated schedules, checked. */
  get definitions(): readonly ScheduleDefinition[] {
    return this.found;
  }

  onModuleInit(): void {
    const found: ScheduleDefinition[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const { instance } = wrapper;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance);
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const meta = this.reflector.get<ScheduleInput | undefined>(RECURRING_METADATA, prototype[method]);
        if (!meta) continue;
        const def = defineSchedule(meta);
        if (found.some((f) => f.name === def.name)) {
          throw new InvalidScheduleError(def.name, `declared twice (again on ${instance.constructor?.name ?? 'provider'}.${method})`);
        }
        found.push(def);
      }
    }
    this.found = found;
  }
}

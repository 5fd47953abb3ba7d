import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import { InvalidJobEventListenerError, JobEventEmitterMissingError } from '../errors';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { JobEventDispatcher, type EventEmitterLike, type NamedListener } from './job-event.dispatcher';
import { JOB_EVENT_NAMES, type JobEventListener, type JobEventName } from './job-event.types';
import { JobLifecycle } from './job-lifecycle';
import { JOB_EVENT_METADATA } from './on-job-event.decorator';

/**
 * Finds `@OnJobEvent` methods on every provider, once, at module init, and hands them to the
 * lifecycle as one sink. With no listener and no forwarding, no sink is added and the core
 * reports nothing at all.
 */
@Injectable()
export class JobEventExplorer implements OnModuleInit, OnApplicationBootstrap {
  private dispatcher: JobEventDispatcher | undefined;

  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
    private readonly lifecycle: JobLifecycle,
  ) {}

  onModuleInit(): void {
    const listeners = new Map<JobEventName, NamedListener[]>();
    for (const wrapper of this.discovery.getProviders()) {
      const prototype = (wrapper.metatype as { prototype?: object } | null)?.prototype;
      if (!prototype || typeof prototype !== 'object') continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const events = this.reflector.get<JobEventName[] | undefined>(JOB_EVENT_METADATA, (prototype as Record<string, () => unknown>)[method]);
        if (!events) continue;
        const name = `${(prototype as { constructor?: { name?: string } }).constructor?.name ?? 'provider'}.${method}`;
        for (const event of events) {
          if (!JOB_EVENT_NAMES.includes(event)) {
            throw new InvalidJobEventListenerError(name, `unknown event ${JSON.stringify(event)}; use one of ${JOB_EVENT_NAMES.join(', ')}.`);
          }
        }
        const { instance } = wrapper;
        if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient || !instance || typeof instance !== 'object') {
          throw new InvalidJobEventListenerError(name, 'listeners must be singleton providers (not request-scoped or transient).');
        }
        const call = ((instance as Record<string, JobEventListener>)[method]).bind(instance) as JobEventListener;
        for (const event of events) listeners.set(event, [...(listeners.get(event) ?? []), { name, call }]);
      }
    }
    if (listeners.size || this.options.events.emitter) {
      this.dispatcher = new JobEventDispatcher(listeners);
      this.lifecycle.addSink(this.dispatcher);
    }
  }

  /** EventEmitter2 is looked up only when asked for, so the core never imports @nestjs/event-emitter. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.events.emitter || !this.dispatcher) return;
    let token: unknown;
    try {
      token = (await import('@nestjs/event-emitter')).EventEmitter2;
    } catch {
      throw new JobEventEmitterMissingError('@nestjs/event-emitter is not installed');
    }
    let emitter: EventEmitterLike | undefined;
    try {
      emitter = this.moduleRef.get(token as never, { strict: false }) as EventEmitterLike;
    } catch {
      emitter = undefined;
    }
    if (!emitter) throw new JobEventEmitterMissingError('no EventEmitter2 provider is registered');
    this.dispatcher.emitter = emitter;
  }
}

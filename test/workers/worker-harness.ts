import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext, DynamicModule, Type } from '@nestjs/common';

/**
 * Shared plumbing of the worker processes the integration specs start: read options from
 * JQ_OPTIONS, boot a Nest application context, talk to the parent over stdio with one JSON
 * message per line.
 */
export function workerOptions<T = Record<string, unknown>>(): T {
  return JSON.parse(process.env.JQ_OPTIONS ?? '{}') as T;
}

export function send(message: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(message) + '\n');
}

/** Resolves when the parent writes `go` (a start barrier for races). */
export function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin });
    rl.on('line', (line) => {
      if (line.trim() === 'go') {
        rl.close();
        process.stdin.destroy(); // an open stdin would keep the process alive after its work
        resolve();
      }
    });
  });
}

export async function bootContext(module: DynamicModule | Type): Promise<INestApplicationContext> {
  const verbose = process.env.JQ_LOG === 'all';
  return NestFactory.createApplicationContext(module, { logger: verbose ? ['error', 'warn', 'log', 'debug'] : ['error', 'warn'] });
}

export function runWorker(main: () => Promise<void>): void {
  main().catch((err) => {
    send({ type: 'error', message: String(err?.stack ?? err) });
    process.exit(1);
  });
}

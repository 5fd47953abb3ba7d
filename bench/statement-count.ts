/**
 * `node dist/bench/statement-count.js [jobs]`: the statements (round trips) a PostgreSQL run sends
 * per job, plain vs traced (issue 12's overhead), counted at the driver (pg Client.query) by
 * statement shape, for each phase apart: a batch enqueue (enqueueGraph, chunks of 1,000),
 * single `enqueue()` calls, and the worker's processing (pg-tracing's drain, concurrency 10).
 * Traced: JobQueueTracingModule and the bench's SDK (tracing-sdk.ts). A statement count is
 * independent of machine load, unlike the rates pg-tracing measures. Also the async resources
 * (promises, timers) created per phase (the probe's polling included), each of which pays Node
 * 20's AsyncLocalStorage hook once a context manager has run a context.
 */
import 'reflect-metadata';
import { createHook } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { DynamicModule } from '@nestjs/common';
import { withDatabase } from './lib/databases';
import { ExecutionLog } from './lib/execution-log';
import { bootEnqueuer, bootOurs, enqueueNoops, ourOptions } from './lib/ours/our-app';

type Phase = 'setup' | 'enqueue batch' | 'enqueue one' | 'process';
let phase: Phase = 'setup';
const counts = new Map<string, number>();

/** The statement's first words, enough to tell the queue's statements apart. */
function shape(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 90);
}

/** Async resources (promises, timers, immediates...) created per phase: each pays the AsyncLocalStorage hook once a context manager is active. */
const resources = new Map<string, number>();
createHook({
  init(_id, type) {
    if (phase === 'setup') return;
    const key = `${phase}\t${type}`;
    resources.set(key, (resources.get(key) ?? 0) + 1);
  },
}).enable();

const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const config = args[0] as string | { text?: string } | undefined;
  const text = typeof config === 'string' ? config : config?.text;
  if (text && phase !== 'setup') {
    const key = `${phase}\t${shape(text)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

async function measure(traced: boolean, jobs: number, singles: number): Promise<Map<string, number>> {
  counts.clear();
  resources.clear();
  phase = 'setup';
  let modules: DynamicModule[] = [];
  let uninstall: (() => Promise<void>) | undefined;
  if (traced) {
    const [{ JobQueueTracingModule }, { installBenchTracing }] = await Promise.all([import('nestjs-sql-job-queue/tracing'), import('./lib/ours/tracing-sdk')]);
    const sdk = installBenchTracing();
    modules = [JobQueueTracingModule.forRoot()];
    uninstall = () => sdk.uninstall();
  }
  try {
    await withDatabase('postgres', async (db) => {
      const enqueuer = await bootEnqueuer('postgres', db.location, modules);
      const probe = await db.probe();
      try {
        phase = 'enqueue batch';
        await enqueueNoops(enqueuer.queue, jobs);
        phase = 'enqueue one';
        for (let i = 0; i < singles; i++) await enqueuer.queue.enqueue({ type: 'noop', args: { tag: i } });
        phase = 'setup';
        ExecutionLog.reset();
        const worker = await bootOurs(ourOptions('postgres', db.location), true, modules);
        phase = 'process';
        try {
          for (;;) {
            const open = await probe.scalar(`SELECT COUNT(*) FROM jobs WHERE state NOT IN ('done', 'failed', 'cancelled')`);
            if (open === 0) break;
            await sleep(20);
          }
        } finally {
          phase = 'setup';
          await worker.close();
        }
      } finally {
        phase = 'setup';
        await enqueuer.close();
      }
    });
  } finally {
    await uninstall?.();
  }
  for (const [k, v] of resources) counts.set(`${k.split('\t')[0]}\t(async resource) ${k.split('\t')[1]}`, v);
  return new Map(counts);
}

function total(m: Map<string, number>, p: Phase): number {
  let n = 0;
  for (const [k, v] of m) if (k.startsWith(`${p}\t`) && !k.includes('(async resource)') && !k.includes('SELECT COUNT(*) FROM jobs WHERE state NOT IN')) n += v;
  return n;
}

async function main(): Promise<void> {
  const jobs = Number(process.argv[2] ?? 5_000);
  const singles = Number(process.argv[3] ?? 200);
  const plain = await measure(false, jobs, singles);
  const traced = await measure(true, jobs, singles);
  const per = (p: Phase) => (p === 'enqueue one' ? singles : p === 'enqueue batch' ? jobs : jobs + singles);
  console.log(`statements per job (PostgreSQL, ${jobs} batch-enqueued + ${singles} single enqueues)`);
  console.log('phase\tplain\ttraced');
  for (const p of ['enqueue batch', 'enqueue one', 'process'] as Phase[]) {
    console.log(`${p}\t${(total(plain, p) / per(p)).toFixed(3)}\t${(total(traced, p) / per(p)).toFixed(3)}`);
  }
  console.log('\nby statement (count plain / traced)');
  const keys = [...new Set([...plain.keys(), ...traced.keys()])].sort();
  for (const k of keys) console.log(`${plain.get(k) ?? 0}\t${traced.get(k) ?? 0}\t${k}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

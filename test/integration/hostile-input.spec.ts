import { Injectable } from '@nestjs/common';
import {
  ArgsNotSerializableError,
  ArgsTooLargeError,
  DependencyCycleError,
  DuplicateRefError,
  InvalidJobError,
  InvalidOptionError,
  JobHandler,
  JobQueueError,
  type JobContext,
  JobQueueModule,
  MissingUpstreamJobError,
  ParentCycleError,
  SelfDependencyError,
  UnknownDependencyError,
  UnknownJobTypeError,
  type GraphNode,
  type JobQueueModuleOptions,
} from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

type ErrorClass = abstract new (...args: never[]) => JobQueueError;

const circular: Record<string, unknown> = { name: 'loop' };
circular.self = circular;

/** Each row: what is wrong, the graph, the typed error expected. Nothing may be written. */
const BAD_GRAPHS: Array<[string, () => GraphNode[], ErrorClass]> = [
  ['a dependency cycle', () => [{ ref: 'a', type: 't', dependsOn: ['c'] }, { ref: 'b', type: 't', dependsOn: ['a'] }, { ref: 'c', type: 't', dependsOn: ['b'] }], DependencyCycleError],
  ['a self-dependency', () => [{ ref: 'a', type: 't', dependsOn: ['a'] }], SelfDependencyError],
  ['an unknown ref', () => [{ ref: 'a', type: 't', dependsOn: ['nope'] }], UnknownDependencyError],
  ['a duplicate ref', () => [{ ref: 'a', type: 't' }, { ref: 'a', type: 't' }], DuplicateRefError],
  ['a dependency on a job id that does not exist', () => [{ ref: 'a', type: 't', dependsOn: [2_000_000_000] }], MissingUpstreamJobError],
  ['a parent that is its own descendant', () => [{ ref: 'a', type: 't', parent: 'b' }, { ref: 'b', type: 't', parent: 'c' }, { ref: 'c', type: 't', parent: 'a' }], ParentCycleError],
  ['args with a function', () => [{ ref: 'a', type: 't', args: { cb: () => 1 } }], ArgsNotSerializableError],
  ['args with a BigInt', () => [{ ref: 'a', type: 't', args: { n: 1n } }], ArgsNotSerializableError],
  ['circular args', () => [{ ref: 'a', type: 't', args: circular }], ArgsNotSerializableError],
  ['args above the size limit', () => [{ ref: 'a', type: 't', args: { blob: 'x'.repeat(5_000) } }], ArgsTooLargeError],
  ['a negative priority', () => [{ ref: 'a', type: 't', priority: -1 }], InvalidJobError],
  ['a non-integer priority', () => [{ ref: 'a', type: 't', priority: 0.5 }], InvalidJobError],
  ['a zero weight', () => [{ ref: 'a', type: 't', weight: 0 }], InvalidJobError],
  ['a non-integer weight', () => [{ ref: 'a', type: 't', weight: 1.5 }], InvalidJobError],
  ['zero attempts', () => [{ ref: 'a', type: 't', maxAttempts: 0 }], InvalidJobError],
  ['a negative timeout', () => [{ ref: 'a', type: 't', timeoutMs: -1 }], InvalidJobError],
  ['a NaN timeout', () => [{ ref: 'a', type: 't', timeoutMs: NaN }], InvalidJobError],
  ['an invalid date', () => [{ ref: 'a', type: 't', runAfter: new Date('not a date') }], InvalidJobError],
  ['an empty type', () => [{ ref: 'a', type: '' }], InvalidJobError],
  ['an over-long type', () => [{ ref: 'a', type: 't'.repeat(201) }], InvalidJobError],
  // NUL and unpaired surrogates: PostgreSQL refused the insert with a raw database error (text and
  // jsonb cannot hold NUL; jsonb refuses a lone surrogate), drivers rewrite lone surrogates in text
  // columns each their own way, and MariaDB's and SQLite's JSON functions misread them in args.
  ['a type with a NUL character', () => [{ ref: 'a', type: 't\u0000x' }], InvalidJobError],
  ['a group with an unpaired surrogate', () => [{ ref: 'a', type: 't', group: 'g\ud800' }], InvalidJobError],
  ['a key with a NUL character', () => [{ ref: 'a', type: 't', key: 'k\u0000' }], InvalidJobError],
  ['a ref with an unpaired surrogate', () => [{ ref: 'a\udc00', type: 't' }], InvalidJobError],
  ['args with a NUL character in a string', () => [{ ref: 'a', type: 't', args: { s: 'a\u0000b' } }], ArgsNotSerializableError],
  ['args with an unpaired surrogate in an array', () => [{ ref: 'a', type: 't', args: { tags: ['ok', '\ud83d'] } }], ArgsNotSerializableError],
  ['args with a NUL character in a key', () => [{ ref: 'a', type: 't', args: { nested: { ['k\u0000']: 1 } } }], ArgsNotSerializableError],
  ['an unregistered type', () => [{ ref: 'ok', type: 't' }, { ref: 'a', type: 'never-registered' }], UnknownJobTypeError],
];

const BAD_OPTIONS: Array<[string, Partial<JobQueueModuleOptions> | string]> = [
  ['an unknown dialect', 'oracle'],
  ['a bad URL', { dialect: 'postgres', url: '::not a url::' }],
  ['a URL of another dialect', { dialect: 'mysql', url: 'postgres://localhost/x' }],
  ['a heartbeat not below the lease TTL', { dialect: 'sqlite', leaseTtlMs: 2_000, heartbeatIntervalMs: 2_000 }],
  ['a negative concurrency', { dialect: 'sqlite', concurrency: -4 }],
  ['a misspelled option', { dialect: 'sqlite', leaseTTL: 5 } as never],
  // A tenant named __proto__ in a JSON config: its limits were silently not enforced.
  ['a rate limit for a group named __proto__', JSON.parse('{"dialect":"sqlite","rateLimits":{"groups":{"__proto__":{"limit":1,"intervalMs":60000}}}}')],
  ['a cap for a group named __proto__', JSON.parse('{"dialect":"sqlite","limits":{"groups":{"__proto__":1}}}')],
];

describeDialects('hostile and bad input', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['t'], maxArgsBytes: 4_096 });
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  it.each(BAD_GRAPHS)('rejects %s with a typed error and writes nothing', async (_what, graph, expected) => {
    await app.queue.enqueue({ type: 't' }); // a row that must survive untouched
    const before = await app.rows(`SELECT id, state, updated_at FROM jobs`);
    const error = await app.queue.enqueueGraph(graph()).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(expected);
    expect((error as Error).message.length).toBeGreaterThan(20);
    expect(await app.rows(`SELECT id, state, updated_at FROM jobs`)).toEqual(before);
    expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_deps`))[0].n)).toBe(0);
  });

  it.each(BAD_OPTIONS)('refuses to start with %s', async (_what, options) => {
    expect(() => JobQueueModule.forRoot(options as never)).toThrow(InvalidOptionError);
  });

  it('stores quotes, semicolons, SQL fragments and emoji verbatim in type, group, key and args', async () => {
    const nasty = [`'; DROP TABLE jobs; --`, `"quoted" \\ backslash`, `Robert'); DELETE FROM job_deps;--`, `😀🚀 ünïcödé`, `%_ LIKE wildcards`, `$1 ? :name`];
    const types = nasty.map((s, i) => `t${i}:${s}`);
    const strict = await startQueueApp(db, { worker: false, externalTypes: types });
    try {
      for (const [i, s] of nasty.entries()) {
        const job = await strict.queue.enqueue({ type: types[i], group: s, key: `${i}:${s}`, args: { s, nested: [s, { s }] } });
        expect(await strict.queue.get(job.id)).toMatchObject({ type: types[i], group: s, key: `${i}:${s}`, args: { s, nested: [s, { s }] } });
      }
      expect(await strict.count()).toBe(nasty.length);
    } finally {
      await strict.close();
    }
  });

  it('a progress stage with NUL or an unpaired surrogate is an InvalidJobError in the handler, and the stored stage stays', async () => {
    @Injectable()
    class Staged {
      @JobHandler('staged')
      async run(_args: unknown, ctx: JobContext): Promise<string[]> {
        await ctx.progress(10, 'fetching');
        const errors: string[] = [];
        for (const stage of ['bad\u0000stage', 'lone \ud800']) {
          await ctx.progress(20, stage).then(
            () => errors.push('stored'),
            (err: Error) => errors.push(err.constructor.name),
          );
        }
        return errors;
      }
    }
    const worker = await startQueueApp(db, { pollIntervalMs: 100 }, [Staged]);
    try {
      const job = await worker.queue.enqueue({ type: 'staged' });
      const done = await worker.queue.waitFor(job.id, { timeoutMs: 30_000 });
      // PostgreSQL refused the UPDATE with a raw DatabaseError; the other dialects stored it.
      expect(done).toMatchObject({ state: 'done', result: ['InvalidJobError', 'InvalidJobError'] });
      expect((await worker.rows(`SELECT current_stage FROM jobs WHERE id = ${job.id}`))[0].current_stage).toBe('fetching');
    } finally {
      await worker.close();
    }
  });

  it('groups named like members of Object.prototype (constructor, __proto__, toString) enqueue and run, by hand and from a schedule', async () => {
    @Injectable()
    class Members {
      @JobHandler('member')
      async run(): Promise<null> {
        return null;
      }
    }
    // More groups than slots (the rotation), and weights configured (their lookup by group).
    const worker = await startQueueApp(db, { pollIntervalMs: 100, concurrency: 2, groupWeights: { acme: 2 } }, [Members]);
    try {
      const ids: number[] = [];
      for (const group of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'acme']) {
        for (let i = 0; i < 3; i++) ids.push((await worker.queue.enqueue({ type: 'member', group })).id);
      }
      for (const id of ids) expect((await worker.queue.waitFor(id, { timeoutMs: 30_000 })).state).toBe('done');
      // A schedule's tick inserts its jobs with every other schedule's: one that failed stalled them all.
      await worker.queue.schedule({ name: 'member-tick', cron: '* * * * * *', type: 'member', group: 'constructor' });
      await eventually('2 slots of the schedule run', async () => (await worker.count(`job_key LIKE 'recurring:member-tick:%' AND state = 'done'`)) >= 2, 30_000, 100);
      await worker.queue.unschedule('member-tick');
    } finally {
      await worker.close();
    }
  });
});

import { ArgsNotSerializableError, ArgsTooLargeError, InvalidJobError } from '../../lib';
import { normalizeJob, type NormalizeContext } from '../../lib/enqueue/normalize-job';

const ctx: NormalizeContext = {
  maxArgsBytes: 1_000,
  defaultMaxAttempts: 3,
  defaultTimeoutMs: null,
  groupWeights: { heavy: 5 },
  handlerDefaults: (type) => (type === 'render' ? { maxAttempts: 7, timeoutMs: 60_000 } : undefined),
};

describe('normalizeJob', () => {
  it('applies handler and option defaults', () => {
    expect(normalizeJob({ type: 'render', args: { a: 1 } }, ctx)).toEqual({
      type: 'render',
      argsJson: '{"a":1}',
      group: 'default',
      weight: 1,
      priority: 0,
      runAfter: null,
      maxAttempts: 7,
      timeoutMs: 60_000,
      key: null,
      keyMode: 'forever',
      keyWindowMs: null,
    });
    expect(normalizeJob({ type: 'x', group: 'heavy' }, ctx)).toMatchObject({ weight: 5, maxAttempts: 3, timeoutMs: null, argsJson: 'null' });
  });

  it('keeps quotes, SQL fragments, control characters and emoji verbatim', () => {
    const text = `'; DROP TABLE jobs; -- "😀" \\ \u0001\t`;
    const job = normalizeJob({ type: text, group: text, key: text, args: { text } }, ctx);
    expect(job.type).toBe(text);
    expect(JSON.parse(job.argsJson)).toEqual({ text });
  });

  it('refuses NUL and unpaired surrogates, which not every database stores, in every text field and in args', () => {
    for (const bad of ['nul\u0000', 'lone\ud800', '\udfff tail', '😀\ud83d']) {
      for (const field of ['type', 'group', 'key'] as const) {
        expect(() => normalizeJob({ type: 'x', [field]: bad }, ctx)).toThrow(InvalidJobError);
      }
      expect(() => normalizeJob({ type: 'x', args: { s: bad } }, ctx)).toThrow(/args\.s is a string holding a NUL character or an unpaired surrogate/);
      expect(() => normalizeJob({ type: 'x', args: { [bad]: 1 } }, ctx)).toThrow(ArgsNotSerializableError);
    }
  });

  const circular: Record<string, unknown> = { a: 1 };
  circular.self = circular;
  const shared = { x: 1 };

  it.each([
    ['a function', { f: () => 1 }, ArgsNotSerializableError, /args\.f is a function/],
    ['a BigInt', { n: [1, 10n] }, ArgsNotSerializableError, /args\.n\[1\] is a BigInt/],
    ['a symbol', { s: Symbol('x') }, ArgsNotSerializableError, /is a symbol/],
    ['a cycle', circular, ArgsNotSerializableError, /args\.self refers back to itself/],
    ['a Map', { m: new Map() }, ArgsNotSerializableError, /Map/],
    ['over the size limit', { s: 'x'.repeat(2_000) }, ArgsTooLargeError, /over the 1000-byte limit/],
  ])('rejects args with %s', (_name, args, ErrorClass, message) => {
    expect(() => normalizeJob({ type: 't', args }, ctx, 'node')).toThrow(ErrorClass);
    expect(() => normalizeJob({ type: 't', args }, ctx, 'node')).toThrow(message);
  });

  it('accepts runAfter from 1000-01-01 to 9999-12-31 (UTC), the bounds included', () => {
    for (const at of ['1000-01-01T00:00:00.000Z', '1969-07-20T20:17:40.000Z', '9999-12-31T23:59:59.999Z']) {
      expect(normalizeJob({ type: 't', runAfter: new Date(at) }, ctx).runAfter?.toISOString()).toBe(at);
    }
  });

  it('accepts the same object twice (a DAG, not a cycle) and Dates', () => {
    const job = normalizeJob({ type: 't', args: { a: shared, b: shared, at: new Date(0) } }, ctx);
    expect(JSON.parse(job.argsJson)).toEqual({ a: { x: 1 }, b: { x: 1 }, at: '1970-01-01T00:00:00.000Z' });
  });

  it.each([
    ['type', { type: '' }],
    ['type', { type: 'x'.repeat(201) }],
    ['type', { type: 42 }],
    ['group', { type: 't', group: '' }],
    ['key', { type: 't', key: 'k'.repeat(256) }],
    ['priority', { type: 't', priority: -1 }],
    ['priority', { type: 't', priority: 1.5 }],
    ['weight', { type: 't', weight: 0 }],
    ['maxAttempts', { type: 't', maxAttempts: 0 }],
    ['timeoutMs', { type: 't', timeoutMs: -5 }],
    ['timeoutMs', { type: 't', timeoutMs: 10.5 }],
    ['runAfter', { type: 't', runAfter: new Date('nope') }],
    ['runAfter', { type: 't', runAfter: '2026-01-01' }],
    // Outside what every dialect stores and orders: SQLite ran a year-10000 job at once, and
    // PostgreSQL and MySQL failed with a raw database error.
    ['runAfter', { type: 't', runAfter: new Date('+010000-01-01T00:00:00Z') }],
    ['runAfter', { type: 't', runAfter: new Date('0999-12-31T23:59:59.999Z') }],
    ['runAfter', { type: 't', runAfter: new Date(-8.64e15) }],
  ])('rejects a bad %s', (field, input) => {
    let caught: unknown;
    try {
      normalizeJob(input as never, ctx, 'n1');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidJobError);
    expect((caught as InvalidJobError).field).toBe(field);
    expect((caught as Error).message).toContain('Job "n1"');
  });
});

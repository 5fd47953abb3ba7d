import { InvalidCursorError, InvalidQueryError } from '../../lib';
import { flattenArgsContains, jsonPath, normalizeArgsContains } from '../../lib/query/args-filter';
import { decodeCursor, decodeKeyCursor, encodeCursor, encodeKeyCursor } from '../../lib/query/find-cursor';
import { canonicalFilter, narrowsJobs, normalizeFilter, normalizePageOptions } from '../../lib/query/job-filter';

describe('normalizeFilter', () => {
  it('accepts every field, one or a list, and normalizes lists and dates', () => {
    const f = normalizeFilter({
      state: ['failed', 'cancelled', 'failed'],
      type: 'render',
      group: 'acme',
      parentId: 7,
      key: 'k',
      argsContains: { tenant: 'acme', n: { deep: [1, 'x', null, true] } },
      errorContains: 'timeout',
      createdAfter: '2026-01-01T00:00:00Z',
      createdBefore: new Date('2026-02-01T00:00:00Z'),
      worker: 'host:123:ab12',
      schedule: 'nightly:eu-west_1.report',
    });
    expect(f.worker).toBe('host:123:ab12');
    expect(f.schedule).toBe('nightly:eu-west_1.report');
    expect(f.states).toEqual(['cancelled', 'failed']);
    expect(f.types).toEqual(['render']);
    expect(f.createdAfter).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(normalizeFilter(undefined)).toEqual({});
  });

  it.each([
    [{ nope: 1 }, 'filter.nope'],
    [{ state: 'finished' }, 'state'],
    [{ state: [] }, 'state'],
    [{ type: '' }, 'type'],
    [{ type: [1] }, 'type'],
    [{ group: 5 }, 'group'],
    [{ parentId: 0 }, 'parentId'],
    [{ worker: '' }, 'worker'],
    [{ worker: 'w'.repeat(129) }, 'worker'],
    [{ worker: ['a'] }, 'worker'],
    [{ parentId: 1.5 }, 'parentId'],
    [{ schedule: '' }, 'schedule'],
    [{ schedule: 'two words' }, 'schedule'],
    [{ schedule: 's'.repeat(221) }, 'schedule'],
    [{ schedule: 'nul\u0000' }, 'schedule'],
    [{ schedule: ['nightly'] }, 'schedule'],
    [{ argsContains: [1] }, 'argsContains'],
    [{ argsContains: 'tenant' }, 'argsContains'],
    [{ argsContains: new Date() }, 'argsContains'],
    [{ argsContains: { a: [{ b: 1 }] } }, 'argsContains'],
    [{ argsContains: { a: Infinity } }, 'argsContains'],
    [{ argsContains: { 'a"b': 1 } }, 'argsContains'],
    [{ argsContains: { a: undefined } }, 'argsContains'],
    [{ createdAfter: 'yesterday' }, 'createdAfter'],
    [{ createdBefore: new Date('x') }, 'createdBefore'],
    [{ createdAfter: new Date('+010000-01-01T00:00:00Z') }, 'createdAfter'],
    [{ createdBefore: '0999-12-31T00:00:00Z' }, 'createdBefore'],
    [{ errorContains: '' }, 'errorContains'],
  ])('%j is refused with InvalidQueryError on %s', (filter, field) => {
    try {
      normalizeFilter(filter);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidQueryError);
      expect((err as InvalidQueryError).field).toBe(field);
      expect((err as InvalidQueryError).code).toBe('INVALID_QUERY');
    }
  });

  it('refuses a filter that is not a plain object', () => {
    expect(() => normalizeFilter([] as never)).toThrow(InvalidQueryError);
    expect(() => normalizeFilter('failed' as never)).toThrow(InvalidQueryError);
  });

  it('gives equal filters the same canonical text, whatever the order', () => {
    const a = normalizeFilter({ state: ['failed', 'done'], argsContains: { a: 1, b: { c: 2 } } });
    const b = normalizeFilter({ argsContains: { b: { c: 2 }, a: 1 }, state: ['done', 'failed'] });
    expect(canonicalFilter(a)).toBe(canonicalFilter(b));
    expect(canonicalFilter(a)).not.toBe(canonicalFilter(normalizeFilter({ state: 'done' })));
  });

  it('keeps the canonical text of a filter without a schedule, so cursors issued before the field stay valid', () => {
    expect(canonicalFilter(normalizeFilter({ state: 'failed', type: 'report' }))).toBe('[["states",["failed"]],["types",["report"]]]');
    expect(canonicalFilter(normalizeFilter({ state: 'failed', schedule: 'nightly' }))).toBe('[["schedule","nightly"],["states",["failed"]]]');
  });
});

describe('narrowsJobs', () => {
  it('is false for a filter that selects every job, true for any real condition', () => {
    expect(narrowsJobs(normalizeFilter({}))).toBe(false);
    expect(narrowsJobs(normalizeFilter(undefined))).toBe(false);
    expect(narrowsJobs(normalizeFilter({ argsContains: {} }))).toBe(false);
    for (const f of [{ state: 'failed' }, { type: 'a' }, { group: 'g' }, { parentId: 1 }, { key: 'k' }, { argsContains: { a: 1 } }, { argsContains: { a: {} } }, { errorContains: 'x' }, { createdAfter: new Date(0) }, { createdBefore: new Date() }, { worker: 'w' }, { schedule: 's' }]) {
      expect(narrowsJobs(normalizeFilter(f))).toBe(true);
    }
    expect(narrowsJobs(normalizeFilter({ argsContains: {}, group: 'g' }))).toBe(true);
  });
});

describe('normalizePageOptions', () => {
  it('defaults to 50 and no cursor', () => {
    expect(normalizePageOptions(undefined)).toEqual({ limit: 50, cursor: null });
    expect(normalizePageOptions({ limit: 500, cursor: 'abc' })).toEqual({ limit: 500, cursor: 'abc' });
  });

  it.each([[{ limit: 0 }], [{ limit: 10_000 }], [{ limit: 2.5 }], [{ limit: '5' }], [{ cursor: 5 }], [{ offset: 10 }]])('refuses %j', (options) => {
    expect(() => normalizePageOptions(options)).toThrow(InvalidQueryError);
  });
});

describe('find cursor', () => {
  const filter = canonicalFilter(normalizeFilter({ state: 'failed' }));

  it('round-trips the position for the same filter', () => {
    expect(decodeCursor(encodeCursor(12345, filter), filter)).toBe(12345);
  });

  it('refuses every cursor that differs from the issued one by a character, whatever the padding of its last', () => {
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // Ids of 1 to 4 digits: payloads of every length mod 3, so last characters with 0, 2 and 4 unused bits.
    for (const id of [7, 45, 459, 1234]) {
      for (const [cursor, decode] of [
        [encodeCursor(id, filter), (c: string) => decodeCursor(c, filter)],
        [encodeKeyCursor(`name-${id}`, filter), (c: string) => decodeKeyCursor(c, filter)],
      ] as const) {
        let refused = 0;
        for (let at = 0; at < cursor.length; at++) {
          for (const ch of ALPHABET) {
            if (ch === cursor[at]) continue;
            expect(() => decode(cursor.slice(0, at) + ch + cursor.slice(at + 1))).toThrow(InvalidCursorError);
            refused++;
          }
        }
        expect(refused).toBe(cursor.length * 63);
      }
    }
  });

  it('refuses a forged, altered or foreign cursor', () => {
    const cursor = encodeCursor(12345, filter);
    const forged = Buffer.from(Buffer.from(cursor, 'base64url').toString().replace('12345', '99999')).toString('base64url');
    expect(() => decodeCursor(forged, filter)).toThrow(/altered/);
    expect(() => decodeCursor('not-a-cursor', filter)).toThrow(InvalidCursorError);
    expect(() => decodeCursor('%%%', filter)).toThrow(InvalidCursorError);
    expect(() => decodeCursor(cursor, canonicalFilter(normalizeFilter({ state: 'done' })))).toThrow(/different filter/);
    try {
      decodeCursor(forged, filter);
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidQueryError);
      expect((err as InvalidCursorError).code).toBe('INVALID_CURSOR');
    }
  });
});

describe('argsContains', () => {
  it('flattens into leaf conditions with JSON paths', () => {
    const f = normalizeArgsContains({ tenant: 'acme', opts: { retry: true, tags: ['a', 2] }, empty: {}, list: [] });
    expect(flattenArgsContains(f)).toEqual([
      { kind: 'equals', path: ['tenant'], value: 'acme' },
      { kind: 'equals', path: ['opts', 'retry'], value: true },
      { kind: 'holds', path: ['opts', 'tags'], value: 'a' },
      { kind: 'holds', path: ['opts', 'tags'], value: 2 },
      { kind: 'is', path: ['empty'], jsonType: 'object' },
      { kind: 'is', path: ['list'], jsonType: 'array' },
    ]);
    expect(jsonPath(['opts', 'a.b'])).toBe('$."opts"."a.b"');
  });

  it('refuses filters over 4 KB', () => {
    expect(() => normalizeArgsContains({ big: 'x'.repeat(5_000) })).toThrow(/4096 bytes/);
  });
});

import { InvalidQueryError } from '../../lib';
import { fromPausedKey, normalizePausedFilter, pausedFilterText, pausedKey } from '../../lib/pause/paused-filter';

describe('findPaused filter and keys (pure)', () => {
  it('takes nothing, or kind type|group; anything else is an InvalidQueryError naming the field', () => {
    expect(normalizePausedFilter(undefined)).toEqual({});
    expect(normalizePausedFilter(null)).toEqual({});
    expect(normalizePausedFilter({})).toEqual({});
    expect(normalizePausedFilter({ kind: undefined })).toEqual({});
    expect(normalizePausedFilter({ kind: 'group' })).toEqual({ kind: 'group' });
    expect(normalizePausedFilter({ kind: 'type' })).toEqual({ kind: 'type' });
    for (const [bad, field] of [
      [{ kind: 'tenant' }, 'kind'],
      [{ kind: 1 }, 'kind'],
      [{ group: 'acme' }, 'filter.group'],
      ['group', 'filter'],
      [[{ kind: 'type' }], 'filter'],
      [new Date(), 'filter'],
    ] as Array<[unknown, string]>) {
      expect(() => normalizePausedFilter(bad)).toThrow(InvalidQueryError);
      try {
        normalizePausedFilter(bad);
      } catch (err) {
        expect((err as InvalidQueryError).field).toBe(field);
      }
    }
  });

  it('keys round-trip whatever the name holds, and the filter text tells filters apart', () => {
    for (const name of ['acme', 'a\nb', '\n', 'type\ngroup', 'ü 😀', '']) {
      for (const kind of ['type', 'group'] as const) expect(fromPausedKey(pausedKey({ kind, name }))).toEqual({ kind, name });
    }
    expect(fromPausedKey('tenant\nacme')).toBeNull();
    expect(fromPausedKey('group')).toBeNull();
    expect(new Set([pausedFilterText({}), pausedFilterText({ kind: 'type' }), pausedFilterText({ kind: 'group' })]).size).toBe(3);
  });
});

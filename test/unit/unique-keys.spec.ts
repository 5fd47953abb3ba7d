import { DuplicateKeyError, GraphValidationError } from '../../lib';
import { assertUniqueKeys } from '../../lib/graph/unique-keys';

describe('assertUniqueKeys', () => {
  it('accepts distinct keys and any number of nodes without one', () => {
    expect(() =>
      assertUniqueKeys([
        { ref: 'a', key: 'k1' },
        { ref: 'b', key: null },
        { ref: 'c', key: null },
        { ref: 'd', key: 'k2' },
      ]),
    ).not.toThrow();
  });

  it('names the key and the first two nodes that share it', () => {
    let error: unknown;
    try {
      assertUniqueKeys([
        { ref: 'a', key: 'k1' },
        { ref: 'b', key: 'k2' },
        { ref: 'c', key: 'k1' },
        { ref: 'd', key: 'k1' },
      ]);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DuplicateKeyError);
    expect(error).toBeInstanceOf(GraphValidationError);
    expect(error).toMatchObject({ code: 'GRAPH_DUPLICATE_KEY', key: 'k1', refs: ['a', 'c'] });
    expect((error as Error).message).toMatch(/"a" and "c" have the same key "k1"/);
  });
});

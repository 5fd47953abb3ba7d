import { GraphTooLargeError, GraphValidationError } from '../../lib/errors';
import { assertGraphSize } from '../../lib/graph/graph-size';
import { resolveOptions } from '../../lib/options/resolve-options';

describe('assertGraphSize', () => {
  const limits = { maxGraphNodes: 3, maxGraphDependencies: 2 };

  it('accepts a graph at the limits', () => {
    expect(() => assertGraphSize([{ ref: 'a', type: 't' }, { ref: 'b', type: 't', dependsOn: ['a'] }, { ref: 'c', type: 't', dependsOn: ['a'] }], limits)).not.toThrow();
  });

  it('rejects too many nodes, naming the count, the limit and the option', () => {
    const nodes = Array.from({ length: 4 }, (_, i) => ({ ref: `n${i}`, type: 't' }));
    expect(() => assertGraphSize(nodes, limits)).toThrow(GraphTooLargeError);
    expect(() => assertGraphSize(nodes, limits)).toThrow(/4 nodes is over the limit of 3 per enqueue \(option maxGraphNodes\)/);
    try {
      assertGraphSize(nodes, limits);
    } catch (err) {
      expect(err).toBeInstanceOf(GraphValidationError);
      expect(err).toMatchObject({ code: 'GRAPH_TOO_LARGE', what: 'nodes', count: 4, limit: 3, option: 'maxGraphNodes' });
    }
  });

  it('rejects too many dependencies summed over the nodes; malformed dependsOn is left to validation', () => {
    const nodes = [{ ref: 'a', type: 't' }, { ref: 'b', type: 't', dependsOn: ['a', 7, 8] }];
    expect(() => assertGraphSize(nodes, limits)).toThrow(/3 dependencies is over the limit of 2 per enqueue \(option maxGraphDependencies\)/);
    expect(() => assertGraphSize([null as never, { ref: 'x', type: 't', dependsOn: 'a' as never }], limits)).not.toThrow();
  });

  it('defaults: 1,000,000 nodes and 5,000,000 dependencies, both configurable', () => {
    const base = { dialect: 'sqlite' } as const;
    expect(resolveOptions(base)).toMatchObject({ maxGraphNodes: 1_000_000, maxGraphDependencies: 5_000_000 });
    expect(resolveOptions({ ...base, maxGraphNodes: 2_000_000, maxGraphDependencies: 0 })).toMatchObject({ maxGraphNodes: 2_000_000, maxGraphDependencies: 0 });
    expect(() => resolveOptions({ ...base, maxGraphNodes: 0 })).toThrow(/maxGraphNodes/);
  });
});

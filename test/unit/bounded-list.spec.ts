import { DependencyCycleError, JobArgsInvalidError, MissingUpstreamJobError, ParentCycleError } from '../../lib';
import { boundedList } from '../../lib/errors/bounded-list';

describe('boundedList', () => {
  it('lists short lists whole', () => {
    expect(boundedList([1, 2, 3], ', ', 3)).toBe('1, 2, 3');
    expect(boundedList(['a', 'b', 'a'], ' -> ', 3, String, true)).toBe('a -> b -> a');
  });

  it('counts the rest of a long list; a path keeps its last item', () => {
    expect(boundedList([1, 2, 3, 4, 5], ', ', 3)).toBe('1, 2, 3, … 2 more');
    expect(boundedList(['a', 'b', 'c', 'd', 'a'], ' -> ', 3, String, true)).toBe('a -> b -> … 2 more -> a');
    expect(boundedList([{ n: 1 }, { n: 2 }], '; ', 1, (o) => `n=${o.n}`)).toBe('n=1; … 1 more');
  });
});

/**
 * Errors naming every item: a cycle through 100,000 nodes was a 3.3 MB message and 100,000
 * missing ids 1.2 MB (`.scratch/big-errors.cjs`); the fields keep every item.
 */
describe('errors over 100,000 items', () => {
  const N = 100_000;
  it('a cycle, a parent chain, missing ids and args issues: messages of a few hundred characters', () => {
    const path = [...Array.from({ length: N }, (_, i) => `node-${i}`), 'node-0'];
    const ids = Array.from({ length: N }, (_, i) => 1_000_000 + i);
    const issues = Array.from({ length: N }, (_, i) => ({ ref: `r${i}`, type: 't', path: 'args.n', message: 'expected a number' }));
    const errors = [new DependencyCycleError(path), new ParentCycleError(path), new MissingUpstreamJobError(ids), new JobArgsInvalidError(issues)];
    for (const err of errors) expect(err.message.length).toBeLessThan(2_000);
    expect(errors[0].message).toMatch(/^Graph: dependency cycle node-0 -> node-1 -> .* -> … 99,981 more -> node-0; a job graph must be acyclic\.$/);
    expect(errors[2].message).toMatch(/1000019, … 99,980 more that do not exist/);
    expect(errors[3].message).toMatch(/^Invalid job args \(100000 issues\): "r0" \(t\) args\.n: expected a number; .*; … 99,990 more\. Fix/);
    expect((errors[0] as DependencyCycleError).path).toHaveLength(N + 1);
    expect((errors[2] as MissingUpstreamJobError).ids).toHaveLength(N);
  });
});

import {
  DependencyCycleError,
  DuplicateRefError,
  InvalidJobError,
  ParentCycleError,
  ParentDependencyConflictError,
  SelfDependencyError,
  UnknownDependencyError,
  UnknownParentError,
} from '../../lib';
import { validateGraph, type GraphNodeShape } from '../../lib/graph/validate-graph';

describe('validateGraph', () => {
  it('resolves refs to indices, inherits container dependencies and counts children', () => {
    const plan = validateGraph([
      { ref: 'fetch' },
      { ref: 'render', dependsOn: ['fetch', 'fetch'] },
      { ref: 'batch', dependsOn: ['render', 7] },
      { ref: 'mail', parent: 'batch' },
      { ref: 'sms', parent: 'batch', dependsOn: ['fetch'] },
    ]);
    expect(plan[1].depIndices).toEqual([0]); // duplicates collapse
    expect(plan[2]).toMatchObject({ isContainer: true, childCount: 2, depIndices: [1], depIds: [7] });
    expect(plan[3]).toMatchObject({ parentIndex: 2, depIndices: [1], depIds: [7], isContainer: false });
    expect(new Set(plan[4].depIndices)).toEqual(new Set([0, 1]));
  });

  it('records the dependencies that allow failure; a strict mention, own or a container\'s, wins', () => {
    const plan = validateGraph([
      { ref: 'a' },
      { ref: 'b' },
      { ref: 'plain', dependsOn: ['a', { job: 'b' }, { job: 'a', allowFailure: false }] },
      { ref: 'cleanup', dependsOn: [{ job: 'a', allowFailure: true }, 'b', { job: 9, allowFailure: true }] },
      { ref: 'twice', dependsOn: [{ job: 'a', allowFailure: true }, 'a'] },
      { ref: 'box', dependsOn: [{ job: 'a', allowFailure: true }, { job: 'b', allowFailure: true }] },
      { ref: 'child', parent: 'box', dependsOn: ['b'] },
    ]);
    expect(plan[2]).toMatchObject({ depIndices: [0, 1] });
    expect(plan[2].lenient).toBeUndefined();
    expect(plan[3]).toMatchObject({ depIndices: [0, 1], depIds: [9], lenient: { indices: new Set([0]), ids: new Set([9]) } });
    expect(plan[4].lenient).toBeUndefined();
    expect(plan[5].lenient).toEqual({ indices: new Set([0, 1]), ids: new Set() });
    // The child inherits the box's lenient `a`; its own strict `b` wins over the box's lenient one.
    expect(new Set(plan[6].depIndices)).toEqual(new Set([0, 1]));
    expect(plan[6].lenient).toEqual({ indices: new Set([0]), ids: new Set() });
  });

  const bad: Array<[string, GraphNodeShape[], new (...a: never[]) => Error, RegExp]> = [
    ['duplicate ref', [{ ref: 'a' }, { ref: 'a' }], DuplicateRefError, /"a" is used by more than one node/],
    ['empty ref', [{ ref: '' }], InvalidJobError, /"ref" must be a non-empty string/],
    ['over-long ref', [{ ref: 'x'.repeat(201) }], InvalidJobError, /at most 200/],
    ['unknown dependency', [{ ref: 'a', dependsOn: ['b'] }], UnknownDependencyError, /"a" depends on "b", which is not a ref/],
    ['self dependency', [{ ref: 'a', dependsOn: ['a'] }], SelfDependencyError, /"a" depends on itself/],
    ['bad id dependency', [{ ref: 'a', dependsOn: [-3] }], InvalidJobError, /dependsOn/],
    ['fractional id dependency', [{ ref: 'a', dependsOn: [1.5] }], InvalidJobError, /dependsOn/],
    ['dependency object without job', [{ ref: 'a', dependsOn: [{ allowFailure: true } as never] }], InvalidJobError, /'job' is required/],
    ['dependency object with an unknown field', [{ ref: 'a' }, { ref: 'b', dependsOn: [{ job: 'a', optional: true } as never] }], InvalidJobError, /unknown field 'optional'/],
    ['allowFailure that is not a boolean', [{ ref: 'a' }, { ref: 'b', dependsOn: [{ job: 'a', allowFailure: 'yes' } as never] }], InvalidJobError, /'allowFailure' must be true or false/],
    ['dependency that is an array', [{ ref: 'a' }, { ref: 'b', dependsOn: [['a'] as never] }], InvalidJobError, /dependsOn/],
    ['dependency object naming an unknown ref', [{ ref: 'a', dependsOn: [{ job: 'b', allowFailure: true }] }], UnknownDependencyError, /"a" depends on "b"/],
    ['dependency object naming itself', [{ ref: 'a', dependsOn: [{ job: 'a', allowFailure: true }] }], SelfDependencyError, /"a" depends on itself/],
    ['cycle through a lenient dependency', [{ ref: 'a', dependsOn: [{ job: 'b', allowFailure: true }] }, { ref: 'b', dependsOn: ['a'] }], DependencyCycleError, /a/],
    [
      'three-node cycle',
      [
        { ref: 'a', dependsOn: ['c'] },
        { ref: 'b', dependsOn: ['a'] },
        { ref: 'c', dependsOn: ['b'] },
      ],
      DependencyCycleError,
      /cycle a -> c -> b -> a/,
    ],
    ['unknown parent', [{ ref: 'a', parent: 'zz' }], UnknownParentError, /parent "zz"/],
    ['own parent', [{ ref: 'a', parent: 'a' }], ParentCycleError, /a -> a/],
    [
      'parent that is its own descendant',
      [
        { ref: 'a', parent: 'b' },
        { ref: 'b', parent: 'a' },
      ],
      ParentCycleError,
      /a -> b -> a/,
    ],
    [
      'child depending on its container',
      [{ ref: 'box' }, { ref: 'in', parent: 'box', dependsOn: ['box'] }],
      ParentDependencyConflictError,
      /"in" depends on its own container "box"/,
    ],
    [
      'container depending on its grandchild',
      [{ ref: 'box', dependsOn: ['leaf'] }, { ref: 'mid', parent: 'box' }, { ref: 'leaf', parent: 'mid' }],
      ParentDependencyConflictError,
      /container "box" depends on its own descendant "leaf"/,
    ],
    [
      'deadlock through a container',
      [{ ref: 'box' }, { ref: 'x', parent: 'box', dependsOn: ['y'] }, { ref: 'y', dependsOn: ['box'] }],
      DependencyCycleError,
      /cycle/,
    ],
  ];

  it.each(bad)('rejects a %s with a typed error', (_name, nodes, ErrorClass, message) => {
    let caught: unknown;
    try {
      validateGraph(nodes);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ErrorClass);
    expect((caught as Error).message).toMatch(message);
  });

  it('handles a 10,000-long chain without recursion limits', () => {
    const nodes = Array.from({ length: 10_000 }, (_, i) => ({ ref: `n${i}`, dependsOn: i ? [`n${i - 1}`] : [] }));
    expect(validateGraph(nodes)).toHaveLength(10_000);
    nodes[0].dependsOn = ['n9999'];
    expect(() => validateGraph(nodes)).toThrow(DependencyCycleError);
  });
});

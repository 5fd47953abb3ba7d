import { copyView } from '../../lib/waiters/copy-view';

describe('copyView', () => {
  const view = () => ({
    id: 7,
    state: 'done',
    args: JSON.parse('{"tenant":"acme","__proto__":{"polluted":true},"list":[{"a":1},null,"s"]}') as Record<string, unknown>,
    result: { text: 'x'.repeat(1_000), nested: { deep: [1, [2, [3]]] } },
    lastError: null,
    createdAt: new Date(1_700_000_000_000),
    finishedAt: null,
  });

  it('is equal to the view, with its own objects, arrays and dates at every level', () => {
    const original = view();
    const copy = copyView(original);
    expect(copy).toEqual(original);
    expect(copy).not.toBe(original);
    expect(copy.args).not.toBe(original.args);
    expect(copy.args.list).not.toBe(original.args.list);
    expect((copy.args.list as object[])[0]).not.toBe((original.args.list as object[])[0]);
    expect(copy.result.nested.deep[1]).not.toBe(original.result.nested.deep[1]);
    expect(copy.createdAt).not.toBe(original.createdAt);
    expect(copy.createdAt).toBeInstanceOf(Date);

    copy.result.nested.deep.push(4);
    copy.createdAt.setTime(0);
    (copy.args.list as Array<Record<string, number>>)[0].a = 9;
    expect(original.result.nested.deep).toEqual([1, [2, [3]]]);
    expect(original.createdAt.getTime()).toBe(1_700_000_000_000);
    expect(original.args.list).toEqual([{ a: 1 }, null, 's']);
  });

  it("keeps a __proto__ key an own property, not the copy's prototype", () => {
    const copy = copyView(view());
    expect(Object.getPrototypeOf(copy.args)).toBe(Object.prototype);
    expect(Object.keys(copy.args)).toEqual(['tenant', '__proto__', 'list']);
    expect(Object.getOwnPropertyDescriptor(copy.args, '__proto__')!.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

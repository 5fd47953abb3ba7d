import { formatPath } from '../../lib/validation/args-issues';

describe('formatPath', () => {
  it('writes Standard Schema paths as readable accessors', () => {
    expect(formatPath(undefined)).toBe('args');
    expect(formatPath([])).toBe('args');
    expect(formatPath(['items', 2, 'sku'])).toBe('args.items[2].sku');
    expect(formatPath([{ key: 'a' }, { key: 0 }])).toBe('args.a[0]');
    expect(formatPath(['with space', 'ok_1'])).toBe('args["with space"].ok_1');
    expect(formatPath([Symbol('s')])).toBe('args["Symbol(s)"]');
  });
});

import { failureForRefused, quoteDbError } from '../../lib/finalize/refusal';

describe('failureForRefused', () => {
  const refusal = Object.assign(new Error('row 7 refused by a trigger'), { code: 'P0001' });

  it('turns a refused result into a failed attempt carrying the database message', () => {
    expect(failureForRefused({ completion: { id: 7, resultJson: '{"x":1}', parentId: null } }, refusal, 250)).toEqual({
      id: 7,
      error: 'the database refused the result of this attempt: row 7 refused by a trigger',
      retryDelayMs: 250,
    });
  });

  it('writes a refused failure record again without its own error text, keeping its retry settings', () => {
    const failure = { id: 9, error: 'bad \u0000 byte', retryDelayMs: 40, final: true };
    expect(failureForRefused({ failure }, new Error('invalid byte sequence for encoding "UTF8": 0x00'), 999)).toEqual({
      id: 9,
      error: `the database refused this attempt's error text: invalid byte sequence for encoding "UTF8": 0x00`,
      retryDelayMs: 40,
      final: true,
    });
  });

  it('cuts a long database message', () => {
    const quoted = quoteDbError(new Error('x'.repeat(5_000)));
    expect(quoted).toHaveLength(1_001);
    expect(quoted.endsWith('…')).toBe(true);
    expect(quoteDbError('plain string')).toBe('plain string');
  });
});

import { MAX_ERROR_LENGTH, storableErrorText } from '../../lib/finalize/error-text';

describe('storableErrorText', () => {
  it('keeps an ordinary text as it is (the same string)', () => {
    const text = 'Error: boom\n    at handler (x.ts:1:1) — ünïcødé 😀';
    expect(storableErrorText(text)).toBe(text);
  });

  it('replaces NUL and unpaired surrogates with U+FFFD, one each, and keeps pairs', () => {
    expect(storableErrorText('a\u0000b\u0000')).toBe('a\ufffdb\ufffd');
    expect(storableErrorText('lone \ud800 high, lone \udc00 low, pair 😀, reversed \udc00\ud800')).toBe(
      'lone \ufffd high, lone \ufffd low, pair 😀, reversed \ufffd\ufffd',
    );
    expect(storableErrorText('\ud83d')).toBe('\ufffd');
  });

  it(`cuts to ${MAX_ERROR_LENGTH} characters, never between the halves of a pair`, () => {
    expect(storableErrorText('x'.repeat(MAX_ERROR_LENGTH + 5))).toBe('x'.repeat(MAX_ERROR_LENGTH));
    // The pair's high half is the last character kept: both halves go.
    expect(storableErrorText('x'.repeat(MAX_ERROR_LENGTH - 1) + '😀')).toBe('x'.repeat(MAX_ERROR_LENGTH - 1));
    // The pair ends exactly at the cut: it stays.
    expect(storableErrorText('x'.repeat(MAX_ERROR_LENGTH - 2) + '😀y')).toBe('x'.repeat(MAX_ERROR_LENGTH - 2) + '😀');
    expect(storableErrorText('\u0000'.repeat(MAX_ERROR_LENGTH * 2))).toBe('\ufffd'.repeat(MAX_ERROR_LENGTH));
  });
});

import { DatabaseNoAnswerError, InvalidOptionError } from '../../lib';
import { withinDeadline } from '../../lib/database/answer-deadline';
import { resolveOptions } from '../../lib/options/resolve-options';

describe('queryTimeoutMs and withinDeadline', () => {
  it('rejects bad values with InvalidOptionError', () => {
    for (const bad of [-1, 1, 999, 1.5, 'soon', Number.MAX_SAFE_INTEGER]) {
      expect(() => resolveOptions({ dialect: 'postgres', url: 'postgres://x/y', queryTimeoutMs: bad } as never)).toThrow(InvalidOptionError);
    }
    expect(resolveOptions({ dialect: 'postgres', url: 'postgres://x/y' }).queryTimeoutMs).toBe(60_000);
    expect(resolveOptions({ dialect: 'postgres', url: 'postgres://x/y', queryTimeoutMs: 0 }).queryTimeoutMs).toBe(0);
    expect(resolveOptions({ dialect: 'postgres', url: 'postgres://x/y', queryTimeoutMs: 1_000 }).queryTimeoutMs).toBe(1_000);
  });

  it('withinDeadline: the answer if in time; else closes once and rejects with DatabaseNoAnswerError', async () => {
    let closed = 0;
    await expect(withinDeadline(Promise.resolve(7), 50, () => closed++)).resolves.toBe(7);
    let fail!: (err: Error) => void;
    const silent = new Promise<never>((_, reject) => (fail = reject));
    const given = withinDeadline(silent, 30, () => {
      closed++;
      fail(new Error('Connection terminated')); // the driver's own error, once its socket is gone
    });
    await expect(given).rejects.toBeInstanceOf(DatabaseNoAnswerError);
    expect(closed).toBe(1);
    await expect(withinDeadline(Promise.reject(new Error('syntax')), 30, () => closed++)).rejects.toThrow('syntax');
    expect(closed).toBe(1);
  });
});

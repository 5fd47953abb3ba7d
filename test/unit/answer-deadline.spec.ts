import { DatabaseNoAnswerError, InvalidOptionError } from '../../lib';
import { withinDeadline } from '../../lib/database/answer-deadline';
import { isConnectionError } from '../../lib/database/db-errors';
import { handshakeDeadlineMs } from '../../lib/database/handshake-deadline';
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

  it("a new connection's handshake: queryTimeoutMs, at most mysql2's 10 s, none without a deadline", () => {
    expect(handshakeDeadlineMs(1_000)).toBe(1_000);
    expect(handshakeDeadlineMs(60_000)).toBe(10_000);
    expect(handshakeDeadlineMs(0)).toBeUndefined();
  });

  it('an unanswered handshake and a pool wait past its bound are connection errors: retried, never charged to a job', () => {
    expect(isConnectionError(new Error('timeout expired'))).toBe(true); // pg's handshake deadline
    expect(isConnectionError(new Error('timeout exceeded when trying to connect'))).toBe(true); // pg-pool's
    expect(isConnectionError(Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' }))).toBe(true); // mysql2's
    expect(isConnectionError(new Error('statement timeout expired in handler'))).toBe(false);
  });
});

import { InvalidPauseTargetError } from '../../lib';
import { normalizePauseTarget, toPauseTarget } from '../../lib/pause/pause-target';

describe('normalizePauseTarget', () => {
  it('takes exactly one of type or group', () => {
    expect(normalizePauseTarget({ type: 'email' })).toEqual({ kind: 'type', name: 'email' });
    expect(normalizePauseTarget({ group: 'acme' })).toEqual({ kind: 'group', name: 'acme' });
    expect(toPauseTarget({ kind: 'group', name: 'acme' })).toEqual({ group: 'acme' });
  });

  it.each([[{}], [{ type: 'a', group: 'b' }], [{ type: '' }], [{ group: 7 }], [{ type: 'x'.repeat(201) }], [{ tenant: 'a' }], ['email'], [null], [['email']]])(
    'refuses %j with InvalidPauseTargetError',
    (target) => {
      expect(() => normalizePauseTarget(target)).toThrow(InvalidPauseTargetError);
    },
  );
});

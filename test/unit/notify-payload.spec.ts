import { announcesReadyTo, readyPayloadOf } from '../../lib/notify/notify.sql';

/**
 * A complete that ended with its worker's claim wakes the others, not that worker: it took
 * what it could in the same transaction, and its own wake would only claim again and find nothing.
 */
describe('ready wake payloads', () => {
  it('wake every worker but the one whose complete claimed', () => {
    const payload = readyPayloadOf('worker-a');
    expect(announcesReadyTo(payload, 'worker-a')).toBe(false);
    expect(announcesReadyTo(payload, 'worker-b')).toBe(true);
  });

  it('keeps the plain ready wake for everyone, and nothing else wakes', () => {
    expect(announcesReadyTo('r', 'worker-a')).toBe(true);
    expect(announcesReadyTo('p', 'worker-a')).toBe(false);
    expect(announcesReadyTo('c:12', 'worker-a')).toBe(false);
  });

  it('compares the whole worker id, which may itself hold colons', () => {
    expect(announcesReadyTo(readyPayloadOf('host:1'), 'host:12')).toBe(true);
    expect(announcesReadyTo(readyPayloadOf('host:12'), 'host:12')).toBe(false);
  });
});

import { healthVerdict } from '../../lib/health/health-verdict';

const base = { now: 100_000, leaseTtlMs: 30_000, database: { ok: true as const, oldestReadyAgeMs: 0 }, claimFailingSince: 0, heartbeatFailingSince: 0 };

describe('healthVerdict', () => {
  it('is up when the database answers and nothing fails', () => {
    expect(healthVerdict(base)).toEqual({ status: 'up' });
  });
  it('is down when the database does not answer', () => {
    expect(healthVerdict({ ...base, database: { ok: false, error: 'ECONNREFUSED' } })).toEqual({ status: 'down', message: 'database unreachable: ECONNREFUSED' });
  });
  it('is down only once claims or renewals have failed for longer than a lease TTL', () => {
    expect(healthVerdict({ ...base, claimFailingSince: base.now - 29_000 }).status).toBe('up');
    expect(healthVerdict({ ...base, claimFailingSince: base.now - 31_000 })).toMatchObject({ status: 'down', message: expect.stringMatching(/claiming has been failing for 31000 ms/) });
    expect(healthVerdict({ ...base, heartbeatFailingSince: base.now - 31_000 })).toMatchObject({ status: 'down', message: expect.stringMatching(/lease renewal/) });
  });
  it('is down once a claim or a renewal has waited for the database longer than a lease TTL', () => {
    expect(healthVerdict({ ...base, heartbeatWaitingSince: base.now - 29_000, claimWaitingSince: base.now - 29_000 }).status).toBe('up');
    expect(healthVerdict({ ...base, heartbeatWaitingSince: base.now - 31_000 })).toEqual({
      status: 'down',
      message: 'lease renewal has waited 31000 ms for the database (lease TTL 30000 ms)',
    });
    expect(healthVerdict({ ...base, claimWaitingSince: base.now - 31_000 })).toEqual({ status: 'down', message: 'a claim has waited 31000 ms for the database (lease TTL 30000 ms)' });
  });
  it('is degraded when the oldest ready job is older than the threshold', () => {
    expect(healthVerdict({ ...base, database: { ok: true, oldestReadyAgeMs: 5_000 }, maxOldestReadyAgeMs: 4_000 })).toMatchObject({ status: 'degraded' });
    expect(healthVerdict({ ...base, database: { ok: true, oldestReadyAgeMs: 5_000 }, maxOldestReadyAgeMs: 6_000 }).status).toBe('up');
    expect(healthVerdict({ ...base, database: { ok: true, oldestReadyAgeMs: 5_000 } }).status).toBe('up');
  });
});

import { reachesPausedGroup, type ClaimRequest } from '../../lib/claim/claim-request';

const base: ClaimRequest = { owner: 'w', types: ['t'], quotas: [], leaseTtlMs: 1_000 };

describe('reachesPausedGroup', () => {
  it('is false without paused groups, whatever the claim', () => {
    expect(reachesPausedGroup({ ...base, quotas: [{ limit: 5 }] })).toBe(false);
    expect(reachesPausedGroup({ ...base, rotation: 3, excludeGroups: [] })).toBe(false);
  });

  it('is true when an any-group quota or the rotation could take a paused group', () => {
    expect(reachesPausedGroup({ ...base, quotas: [{ limit: 5 }], excludeGroups: ['p'] })).toBe(true);
    expect(reachesPausedGroup({ ...base, rotation: 2, excludeGroups: ['p'] })).toBe(true);
  });

  it('is false when only per-group quotas (or empty ones) ask for jobs', () => {
    expect(reachesPausedGroup({ ...base, quotas: [{ group: 'a', limit: 5 }, { limit: 0 }], excludeGroups: ['p'] })).toBe(false);
  });
});

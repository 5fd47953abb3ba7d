import { inClaimOrder } from '../../lib/claim/claimed-job';

describe('inClaimOrder', () => {
  it('puts higher priority first, then the older id, across types and groups alike', () => {
    const jobs = [
      { id: 5, priority: 0 },
      { id: 9, priority: 5 },
      { id: 2, priority: 0 },
      { id: 7, priority: 5 },
      { id: 1, priority: -3 },
    ];
    expect([...jobs].sort(inClaimOrder).map((j) => j.id)).toEqual([7, 9, 2, 5, 1]);
  });
});

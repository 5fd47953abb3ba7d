import { describe, expect, it } from '@jest/globals';
import { RateForecast } from '../../lib/claim/rate-forecast';

describe('RateForecast', () => {
  it('keeps a group full until its window reopens, then forgets it', () => {
    let now = 1_000;
    const f = new RateForecast(() => now);
    f.full('acme', 500);
    f.full('globex', 2_000);
    expect(f.fullGroups()).toEqual({ groups: ['acme', 'globex'], reopensInMs: 500 });
    now = 1_500; // acme's window reopens now
    expect(f.fullGroups()).toEqual({ groups: ['globex'], reopensInMs: 1_500 });
    now = 3_000;
    expect(f.fullGroups()).toEqual({ groups: [] });
  });

  it('a claim its window admitted clears a group; a later full window sets it again', () => {
    let now = 0;
    const f = new RateForecast(() => now);
    f.full('acme', 1_000);
    f.admitted('acme');
    expect(f.fullGroups()).toEqual({ groups: [] });
    f.full('acme', 10);
    now = 5;
    expect(f.fullGroups()).toEqual({ groups: ['acme'], reopensInMs: 5 });
  });
});

import { describe, expect, it } from '@jest/globals';
import { RateForecast } from '../../lib/claim/rate-forecast';

describe('RateForecast', () => {
  it('keeps a group full until its window reopens, then forgets it', () => {
    let now = 1_000;
    const f = new RateForecast(() => now);
    f.full('acme', 500);
    f.full('globex', 2_000);
    expect(f.fullGroups().sort()).toEqual(['acme', 'globex']);
    now = 1_500; // acme's window reopens now
    expect(f.fullGroups()).toEqual(['globex']);
    now = 3_000;
    expect(f.fullGroups()).toEqual([]);
  });

  it('a claim its window admitted clears a group; a later full window sets it again', () => {
    let now = 0;
    const f = new RateForecast(() => now);
    f.full('acme', 1_000);
    f.admitted('acme');
    expect(f.fullGroups()).toEqual([]);
    f.full('acme', 10);
    now = 5;
    expect(f.fullGroups()).toEqual(['acme']);
  });
});

import 'reflect-metadata';
import { InvalidOptionError } from '../../lib';
import { resolveMetricsOptions } from '../../lib/metrics/metrics.options';
import { resolveOptions } from '../../lib/options/resolve-options';

describe('observability options', () => {
  it('events: defaults off, accepts { emitter: true }, rejects anything else with the option named', () => {
    expect(resolveOptions('sqlite').events).toEqual({ emitter: false });
    expect(resolveOptions({ dialect: 'sqlite', events: { emitter: true } }).events).toEqual({ emitter: true });
    expect(() => resolveOptions({ dialect: 'sqlite', events: { emitter: 'yes' } } as never)).toThrow(/events\.emitter/);
    expect(() => resolveOptions({ dialect: 'sqlite', events: { emiter: true } } as never)).toThrow(InvalidOptionError);
    expect(() => resolveOptions({ dialect: 'sqlite', events: true } as never)).toThrow(/events/);
  });

  it('metrics: defaults, and clear errors for a bad path, cache or buckets', () => {
    expect(resolveMetricsOptions()).toMatchObject({ path: null, groupLabel: false, cacheMs: 5_000 });
    expect(resolveMetricsOptions({ path: '/metrics', groupLabel: true })).toMatchObject({ path: '/metrics', groupLabel: true });
    expect(() => resolveMetricsOptions({ path: 'met rics' })).toThrow(/metrics\.path/);
    expect(() => resolveMetricsOptions({ cacheMs: -1 })).toThrow(/metrics\.cacheMs/);
    expect(() => resolveMetricsOptions({ buckets: [1, 0.5] })).toThrow(/metrics\.buckets/);
  });
});

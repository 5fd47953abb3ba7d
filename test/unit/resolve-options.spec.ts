import { InvalidOptionError } from '../../lib';
import { resolveOptions } from '../../lib/options/resolve-options';

describe('resolveOptions', () => {
  it('accepts a bare dialect and applies defaults', () => {
    const o = resolveOptions('sqlite');
    expect(o).toMatchObject({
      dialect: 'sqlite',
      runMigrations: true,
      worker: true,
      concurrency: 10,
      leaseTtlMs: 30_000,
      heartbeatIntervalMs: 10_000,
      pollIntervalMs: 1_000,
      defaultMaxAttempts: 3,
      defaultTimeoutMs: null,
      strictTypes: true,
    });
    expect(o.workerId).toMatch(/:\d+:[0-9a-f]{8}$/);
  });

  it.each([
    ['unknown dialect', { dialect: 'oracle' }, 'dialect', /one of 'postgres', 'mysql', 'sqlite'/],
    ['missing dialect', {}, 'dialect', /one of/],
    ['bad url', { dialect: 'postgres', url: 'not a url' }, 'url', /postgres:\/\//],
    ['wrong scheme', { dialect: 'mysql', url: 'postgres://x/y' }, 'url', /mysql:\/\//],
    ['no url for a server dialect', { dialect: 'postgres' }, 'url', /set/],
    ['in-memory sqlite', { dialect: 'sqlite', database: ':memory:' }, 'database', /file path/],
    ['zero concurrency', { dialect: 'sqlite', concurrency: 0 }, 'concurrency', /integer from 1/],
    ['fractional concurrency', { dialect: 'sqlite', concurrency: 2.5 }, 'concurrency', /integer/],
    ['string poll interval', { dialect: 'sqlite', pollIntervalMs: '100' }, 'pollIntervalMs', /integer/],
    ['heartbeat not below lease', { dialect: 'sqlite', leaseTtlMs: 5_000, heartbeatIntervalMs: 5_000 }, 'heartbeatIntervalMs', /below leaseTtlMs \(5000\)/],
    ['negative grace', { dialect: 'sqlite', shutdownGraceMs: -1 }, 'shutdownGraceMs', /integer from 0/],
    ['bad global limit', { dialect: 'sqlite', limits: { global: 0 } }, 'limits.global', /integer from 1/],
    ['bad group limit', { dialect: 'sqlite', limits: { groups: { a: -2 } } }, 'limits.groups.a', /integer/],
    ['unknown limit', { dialect: 'sqlite', limits: { tenants: 3 } }, 'limits.tenants', /global, groups, types/],
    ['zero rate limit', { dialect: 'sqlite', rateLimits: { types: { email: { limit: 0, intervalMs: 1_000 } } } }, 'rateLimits.types.email.limit', /integer from 1/],
    ['negative rate limit', { dialect: 'sqlite', rateLimits: { groups: { acme: { limit: -1, intervalMs: 1_000 } } } }, 'rateLimits.groups.acme.limit', /integer from 1/],
    ['zero rate interval', { dialect: 'sqlite', rateLimits: { types: { email: { limit: 5, intervalMs: 0 } } } }, 'rateLimits.types.email.intervalMs', /integer from 1/],
    ['negative rate interval', { dialect: 'sqlite', rateLimits: { types: { email: { limit: 5, intervalMs: -10 } } } }, 'rateLimits.types.email.intervalMs', /integer from 1/],
    ['missing rate interval', { dialect: 'sqlite', rateLimits: { types: { email: { limit: 5 } } } }, 'rateLimits.types.email.intervalMs', /integer from 1/],
    ['unknown rate limit kind', { dialect: 'sqlite', rateLimits: { tenants: {} } }, 'rateLimits.tenants', /types, groups/],
    ['stray rate limit field', { dialect: 'sqlite', rateLimits: { types: { email: { limit: 5, intervalMs: 10, burst: 3 } } } }, 'rateLimits.types.email.burst', /limit, intervalMs/],
    ['bad weight', { dialect: 'sqlite', groupWeights: { a: 0.5 } }, 'groupWeights.a', /integer/],
    // Only JSON.parse makes `__proto__` an own key; a literal would set the prototype.
    ['a rate-limited group named __proto__', JSON.parse('{"dialect":"sqlite","rateLimits":{"groups":{"__proto__":{"limit":1,"intervalMs":60000}}}}'), 'rateLimits.groups.__proto__', /other than __proto__/],
    ['a capped group named __proto__', JSON.parse('{"dialect":"sqlite","limits":{"groups":{"__proto__":1}}}'), 'limits.groups.__proto__', /other than __proto__/],
    ['a weight for a group named __proto__', JSON.parse('{"dialect":"sqlite","groupWeights":{"__proto__":3}}'), 'groupWeights.__proto__', /other than __proto__/],
    ['bad backoff factor', { dialect: 'sqlite', retryBackoff: { factor: 0.5 } }, 'retryBackoff.factor', /number from 1/],
    ['non-boolean worker', { dialect: 'sqlite', worker: 'yes' }, 'worker', /true or false/],
    ['typo in an option name', { dialect: 'sqlite', concurency: 3 }, 'concurency', /documented options/],
    ['bad externalTypes', { dialect: 'sqlite', externalTypes: [''] }, 'externalTypes', /non-empty strings/],
    ['zero maxResultBytes', { dialect: 'sqlite', maxResultBytes: 0 }, 'maxResultBytes', /integer from 1 to 268435456/],
    ['huge maxResultBytes', { dialect: 'sqlite', maxResultBytes: 2 ** 30 }, 'maxResultBytes', /integer from 1 to 268435456/],
    ['a non-DataSource', { dialect: 'postgres', dataSource: {} }, 'dataSource', /TypeORM DataSource/],
  ])('rejects %s, naming the option', (_name, input, option, expected) => {
    let caught: unknown;
    try {
      resolveOptions(input as never);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidOptionError);
    expect((caught as InvalidOptionError).option).toBe(option);
    expect((caught as Error).message).toMatch(expected);
    expect((caught as Error).message).toContain(`"${option}"`);
  });

  it('defaults maxResultBytes per dialect, under what each server accepts', () => {
    expect(resolveOptions({ dialect: 'mysql', url: 'mysql://h/d' }).maxResultBytes).toBe(4 * 1024 * 1024);
    expect(resolveOptions({ dialect: 'postgres', url: 'postgres://h/d' }).maxResultBytes).toBe(16 * 1024 * 1024);
    expect(resolveOptions('sqlite').maxResultBytes).toBe(16 * 1024 * 1024);
    expect(resolveOptions({ dialect: 'sqlite', maxResultBytes: 1_000 }).maxResultBytes).toBe(1_000);
  });

  it('rejects a DataSource of another dialect', () => {
    const ds = { options: { type: 'mysql' }, createQueryRunner: () => undefined };
    expect(() => resolveOptions({ dialect: 'postgres', dataSource: ds as never })).toThrow(/type postgres for dialect 'postgres'/);
  });
});

import { SchemaOutOfDateError } from '../../lib';
import { missingMigrations } from '../../lib/migrations/schema-check';

const shipped = [
  { version: 1, name: 'JobQueueInit1764403200000' },
  { version: 2, name: 'JobQueueLimits1764489600000' },
  { version: 3, name: 'JobQueueArchive1764576000000' },
];

describe('missingMigrations', () => {
  it('counts a version in job_queue_migrations or a name in TypeORM’s table as applied', () => {
    expect(missingMigrations(shipped, new Set([1]), new Set(['JobQueueArchive1764576000000']))).toEqual([shipped[1]]);
  });

  it('lists every migration of an empty database, in order', () => {
    expect(missingMigrations(shipped, new Set(), new Set())).toEqual(shipped);
  });

  it('ignores versions the database has beyond the library’s (a newer process in a rolling upgrade)', () => {
    expect(missingMigrations(shipped, new Set([1, 2, 3, 4, 5]), new Set())).toEqual([]);
  });

  it('does not take another dialect’s or the application’s own migration names for ours', () => {
    expect(missingMigrations(shipped, new Set(), new Set(['JobQueueInitPostgres', 'AddUsers1764403200000']))).toEqual(shipped);
  });
});

describe('SchemaOutOfDateError', () => {
  it('names what is missing, where it looked, and each way to fix it', () => {
    const err = new SchemaOutOfDateError('mysql', shipped.slice(1), 'app_migrations');
    expect(err.code).toBe('SCHEMA_OUT_OF_DATE');
    expect(err.message).toContain('2 JobQueueLimits1764489600000, 3 JobQueueArchive1764576000000');
    expect(err.message).toContain('"app_migrations"');
    expect(err.message).toContain('runMigrations: true');
    expect(err.message).toContain(`jobQueueMigrationClasses('mysql')`);
    expect(err.message).toContain('job_queue_migrations (version, name)');
  });

  it('keeps a long list short', () => {
    const many = Array.from({ length: 27 }, (_, i) => ({ version: i + 1, name: `M${i + 1}` }));
    const err = new SchemaOutOfDateError('postgres', many, 'migrations');
    expect(err.message).toContain('1 M1, 2 M2, 3 M3, 4 M4, 5 M5 and 22 more');
    expect(err.missing).toHaveLength(27);
  });
});

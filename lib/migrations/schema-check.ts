import type { DataSource } from 'typeorm';
import { SchemaOutOfDateError } from '../errors';
import type { Dialect } from '../job-queue.options';
import { jobQueueMigrations } from './index';
import { historyTableExists, readRecordedVersions, readTypeormNames } from './schema-history.sql';

export interface ShippedMigration {
  version: number;
  name: string;
}

/**
 * The shipped migrations recorded in neither place. A version in `job_queue_migrations` or a
 * name in TypeORM's table counts as applied; versions the database has beyond ours (a newer
 * library in a rolling upgrade) are not our concern.
 */
export function missingMigrations(
  shipped: readonly ShippedMigration[],
  versions: ReadonlySet<number>,
  typeormNames: ReadonlySet<string>,
): ShippedMigration[] {
  return shipped.filter((m) => !versions.has(m.version) && !typeormNames.has(m.name));
}

/**
 * With `runMigrations: false`, refuses to start on a schema older than this library: a missing
 * function or procedure would otherwise fail claims and finalizes one by one, long after boot.
 */
export async function assertSchemaCurrent(ds: DataSource, dialect: Dialect): Promise<void> {
  const shipped = jobQueueMigrations(dialect).map(({ version, name }) => ({ version, name }));
  const versions = (await historyTableExists(ds, dialect, 'job_queue_migrations')) ? await readRecordedVersions(ds) : new Set<number>();
  if (missingMigrations(shipped, versions, new Set()).length === 0) return;
  const table = ds.options.migrationsTableName ?? 'migrations';
  const names = (await historyTableExists(ds, dialect, table)) ? await readTypeormNames(ds, dialect, table) : new Set<string>();
  const missing = missingMigrations(shipped, versions, names);
  if (missing.length) throw new SchemaOutOfDateError(dialect, missing, table);
}

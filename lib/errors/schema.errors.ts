import { JobQueueError } from './job-queue.error';

/**
 * With `runMigrations: false`, the database lacks migrations this version of the library
 * needs. Raised at start-up, before any statement relies on them; nothing is written.
 */
export class SchemaOutOfDateError extends JobQueueError {
  readonly code = 'SCHEMA_OUT_OF_DATE';

  constructor(
    readonly dialect: string,
    readonly missing: ReadonlyArray<{ version: number; name: string }>,
    /** The TypeORM migrations table that was looked in besides `job_queue_migrations`. */
    readonly typeormTable: string,
  ) {
    super(
      `The ${dialect} database lacks ${missing.length} of nestjs-sql-job-queue's migrations ` +
        `(${describeMissing(missing)}), and runMigrations is false. Neither job_queue_migrations nor ` +
        `TypeORM's "${typeormTable}" table records them. Apply them: set runMigrations: true, or add ` +
        `jobQueueMigrationClasses('${dialect}') to your DataSource's migrations and run them; if you applied ` +
        `their SQL another way, record each in job_queue_migrations (version, name).`,
    );
  }
}

function describeMissing(missing: ReadonlyArray<{ version: number; name: string }>): string {
  const shown = missing.slice(0, 5).map((m) => `${m.version} ${m.name}`);
  return missing.length > 5 ? `${shown.join(', ')} and ${missing.length - 5} more` : shown.join(', ');
}

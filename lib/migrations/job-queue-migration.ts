import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A versioned schema step. It is also a TypeORM `MigrationInterface`, so an application that
 * runs its migrations with TypeORM can list ours (`jobQueueMigrationClasses(dialect)`) and set
 * `runMigrations: false`.
 */
export abstract class JobQueueMigration implements MigrationInterface {
  /** Position in the sequence; recorded in `job_queue_migrations`. */
  abstract readonly version: number;
  abstract readonly name: string;
  protected abstract readonly upSql: readonly string[];
  protected abstract readonly downSql: readonly string[];

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of this.upSql) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of this.downSql) await queryRunner.query(statement);
  }
}

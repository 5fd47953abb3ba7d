import { JobQueueMigration } from '../job-queue-migration';

/**
 * `(parent_id, id)` in place of `(parent_id)`. A PostgreSQL index holds equal keys in heap order,
 * not id order, so find({ parentId }), newest first, either sorted all of a container's children
 * or walked the primary key from the newest job down to them: a first page of 50 of a container
 * whose 10,000 children are older than 990,000 other jobs read all 990,000 (170-270 ms). With the
 * id in the key a page reads its own rows. Every statement on `parent_id` (the finalize's counts,
 * cancel, getGraph) reads the new index as it did the old, and the table keeps one index on
 * parent_id, so writes cost what they did. MySQL's and SQLite's secondary indexes already end
 * with the primary key, so theirs need no change.
 *
 * On a large table, build the new index beforehand without blocking writes:
 *   CREATE INDEX CONCURRENTLY jobs_parent_id_idx ON jobs (parent_id, id) WHERE parent_id IS NOT NULL;
 * (IF NOT EXISTS then skips it here.)
 */
export class JobQueueParentIdIndexPostgres1769100000001 extends JobQueueMigration {
  readonly version = 36;
  readonly name = 'JobQueueParentIdIndex1769100000001';
  protected readonly upSql = [
    `CREATE INDEX IF NOT EXISTS jobs_parent_id_idx ON jobs (parent_id, id) WHERE parent_id IS NOT NULL`,
    `DROP INDEX IF EXISTS jobs_parent_idx`,
  ];
  protected readonly downSql = [
    `CREATE INDEX IF NOT EXISTS jobs_parent_idx ON jobs (parent_id) WHERE parent_id IS NOT NULL`,
    `DROP INDEX IF EXISTS jobs_parent_id_idx`,
  ];
}

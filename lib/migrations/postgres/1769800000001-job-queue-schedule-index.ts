import { JobQueueMigration } from '../job-queue-migration';

/**
 * find({ schedule }): the jobs of one recurring schedule, keyed `recurring:<name>:<slot>`. The key's
 * unique index cannot serve a prefix: it follows the database's collation, which need not order
 * bytes, and `a:` is a prefix of schedule `a:b`'s keys too. This indexes the key less its slot
 * (its last 25 characters: `:` and the ISO time) with the id, for slot keys only, so a page of a
 * schedule's runs reads its own rows newest first whatever the table holds. Jobs without such a key
 * get no entry, and in-flight rows none either, as in the other find indexes (migration 12): find
 * reads those through `jobs_in_flight_idx`. The expressions are the text find() writes out.
 *
 * On a large table, build it beforehand without blocking writes:
 *   CREATE INDEX CONCURRENTLY jobs_find_schedule_idx ON jobs ((left(job_key, -25)), id) WHERE substr(job_key, 1, 10) = 'recurring:' AND state NOT IN ('leased', 'running');
 * (IF NOT EXISTS then skips it here.)
 */
export class JobQueueScheduleIndexPostgres1769800000001 extends JobQueueMigration {
  readonly version = 44;
  readonly name = 'JobQueueScheduleIndex1769800000001';
  protected readonly upSql = [
    `CREATE INDEX IF NOT EXISTS jobs_find_schedule_idx ON jobs ((left(job_key, -25)), id) WHERE substr(job_key, 1, 10) = 'recurring:' AND state NOT IN ('leased', 'running')`,
  ];
  protected readonly downSql = [`DROP INDEX IF EXISTS jobs_find_schedule_idx`];
}

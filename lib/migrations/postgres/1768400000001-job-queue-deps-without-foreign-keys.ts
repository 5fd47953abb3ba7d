import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_deps` keeps its edges without foreign keys. Every check on each inserted edge locked its
 * two jobs `FOR KEY SHARE` again: 865 ms of a 100,000-edge enqueue against 190 ms without
 * (bench/HISTORY.md, graphs-large). The queue never relied on them: an enqueue locks the existing
 * upstreams it names and refuses missing ones (`MissingUpstreamJobError`), retention deletes a
 * job's edges with it, and `getGraph` keeps only edges between the jobs it returns. Down deletes
 * edges whose jobs are gone, then adds the keys back.
 */
export class JobQueueDepsWithoutForeignKeysPostgres1768400000001 extends JobQueueMigration {
  readonly version = 29;
  readonly name = 'JobQueueDepsWithoutForeignKeys1768400000001';
  protected readonly upSql = [
    `ALTER TABLE job_deps DROP CONSTRAINT IF EXISTS job_deps_job_id_fkey, DROP CONSTRAINT IF EXISTS job_deps_depends_on_id_fkey`,
  ];
  protected readonly downSql = [
    `DELETE FROM job_deps d WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = d.job_id)
      OR NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = d.depends_on_id)`,
    `ALTER TABLE job_deps
      ADD CONSTRAINT job_deps_job_id_fkey FOREIGN KEY (job_id) REFERENCES jobs (id) ON DELETE CASCADE,
      ADD CONSTRAINT job_deps_depends_on_id_fkey FOREIGN KEY (depends_on_id) REFERENCES jobs (id) ON DELETE CASCADE`,
  ];
}

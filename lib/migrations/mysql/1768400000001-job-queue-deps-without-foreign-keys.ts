import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_deps` keeps its edges without foreign keys: InnoDB checked each inserted edge against both
 * of its jobs under a shared lock (0.31–0.35 s of a 100,000-edge enqueue against 0.19–0.24 s
 * without, bench/HISTORY.md, graphs-large). The queue never relied on them (see the PostgreSQL
 * migration of the same name). The indexes stay: the primary key leads with `job_id`, and
 * `job_deps_depends_on_idx` serves promotion. Down deletes edges whose jobs are gone first.
 */
export class JobQueueDepsWithoutForeignKeysMysql1768400000001 extends JobQueueMigration {
  readonly version = 18;
  readonly name = 'JobQueueDepsWithoutForeignKeys1768400000001';
  protected readonly upSql = [`ALTER TABLE job_deps DROP FOREIGN KEY job_deps_job_fk, DROP FOREIGN KEY job_deps_depends_on_fk`];
  protected readonly downSql = [
    `DELETE d FROM job_deps d LEFT JOIN jobs j ON j.id = d.job_id LEFT JOIN jobs u ON u.id = d.depends_on_id
      WHERE j.id IS NULL OR u.id IS NULL`,
    `ALTER TABLE job_deps
      ADD CONSTRAINT job_deps_job_fk FOREIGN KEY (job_id) REFERENCES jobs (id) ON DELETE CASCADE,
      ADD CONSTRAINT job_deps_depends_on_fk FOREIGN KEY (depends_on_id) REFERENCES jobs (id) ON DELETE CASCADE`,
  ];
}

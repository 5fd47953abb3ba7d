import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueQueryIndexesMysql1765100000001 extends JobQueueMigration {
  readonly version = 5;
  readonly name = 'JobQueueQueryIndexes1765100000001';
  protected readonly upSql = [
    // find(): newest first within a state, a type or a group (keyset on id). InnoDB adds
    // secondary indexes online (in place, writes continue). args stay LONGTEXT: argsContains
    // uses JSON_CONTAINS on a bounded window of rows (see lib/query/find-jobs.sql.ts).
    `ALTER TABLE jobs ADD KEY jobs_state_id_idx (state, id), ADD KEY jobs_type_id_idx (type, id), ADD KEY jobs_group_id_idx (group_key, id)`,
  ];
  protected readonly downSql = [`ALTER TABLE jobs DROP KEY jobs_state_id_idx, DROP KEY jobs_type_id_idx, DROP KEY jobs_group_id_idx`];
}

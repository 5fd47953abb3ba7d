import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { READY_GROUPS_SQL_V25 } from './1768000000001-job-queue-ready-groups-bounded';

const swap = (text: string, from: string, to: string): string => swapText(28, text, from, to);

/**
 * The walk of ready groups steps over paused groups (`job_queue_paused`), one primary-key probe
 * per pair, and only when some group is paused. Before, the worker's look at its first groups
 * walked them in TypeScript, one round trip per pair, whenever it knew of paused groups, and the
 * rotation claim did the same inside its transaction, holding the cursor's lock: with 2,000
 * paused groups holding ready jobs, a job of another group waited 6.5 s to start, 30 s under
 * load (test/integration/paused-groups-scale). The rotation claim walks through this function,
 * so it now takes no paused group either, and the worker makes it in one call. The table is the
 * truth the workers' copies are read from; a group paused a moment ago is stepped over at once.
 */
export const READY_GROUPS_SQL_V28 = swap(
  swap(READY_GROUPS_SQL_V25, `      v_n int := 0;\n`, `      v_n int := 0;\n      v_paused boolean := EXISTS (SELECT 1 FROM job_queue_paused p WHERE p.kind = 'group');\n`),
  `        IF NOT (v_t = ANY ($1)) THEN\n          v_w := NULL;`,
  `        IF NOT (v_t = ANY ($1))\n            OR (v_paused AND EXISTS (SELECT 1 FROM job_queue_paused p WHERE p.kind = 'group' AND p.name = v_g)) THEN\n          v_w := NULL;`,
);

export class JobQueueReadyGroupsPausedPostgres1768300000001 extends JobQueueMigration {
  readonly version = 28;
  readonly name = 'JobQueueReadyGroupsPaused1768300000001';
  protected readonly upSql = [READY_GROUPS_SQL_V28];
  protected readonly downSql = [READY_GROUPS_SQL_V25];
}

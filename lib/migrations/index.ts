import type { Dialect } from '../job-queue.options';
import type { JobQueueMigration } from './job-queue-migration';
import { JobQueueInitMysql1764403200000 } from './mysql/1764403200000-job-queue-init';
import { JobQueueInitPostgres1764403200000 } from './postgres/1764403200000-job-queue-init';
import { JobQueueInitSqlite1764403200000 } from './sqlite/1764403200000-job-queue-init';
import { JobQueueLimitsMysql1764489600000 } from './mysql/1764489600000-job-queue-limits';
import { JobQueueLimitsPostgres1764489600000 } from './postgres/1764489600000-job-queue-limits';
import { JobQueueLimitsSqlite1764489600000 } from './sqlite/1764489600000-job-queue-limits';
import { JobQueueArchiveMysql1764576000000 } from './mysql/1764576000000-job-queue-archive';
import { JobQueueArchivePostgres1764576000000 } from './postgres/1764576000000-job-queue-archive';
import { JobQueueClaimFunctionPostgres1764662400000 } from './postgres/1764662400000-job-queue-claim-function';
import { JobQueueCompleteFunctionPostgres1764748800000 } from './postgres/1764748800000-job-queue-complete-function';
import { JobQueueEnqueueFunctionPostgres1764835200000 } from './postgres/1764835200000-job-queue-enqueue-function';
import { JobQueueSettledNotifyPostgres1765400000001 } from './postgres/1765400000001-job-queue-settled-notify';
import { JobQueueArchiveSqlite1764576000000 } from './sqlite/1764576000000-job-queue-archive';
import { JobQueuePartialKeyIndexSqlite1764662400000 } from './sqlite/1764662400000-job-queue-partial-key-index';
import { JobQueueRotationMysql1765000000001 } from './mysql/1765000000001-job-queue-rotation';
import { JobQueueRotationPostgres1765000000001 } from './postgres/1765000000001-job-queue-rotation';
import { JobQueueRotationSqlite1765000000001 } from './sqlite/1765000000001-job-queue-rotation';
import { JobQueueQueryIndexesMysql1765100000001 } from './mysql/1765100000001-job-queue-query-indexes';
import { JobQueueQueryIndexesPostgres1765100000001 } from './postgres/1765100000001-job-queue-query-indexes';
import { JobQueueQueryIndexesSqlite1765100000001 } from './sqlite/1765100000001-job-queue-query-indexes';
import { JobQueuePausedMysql1765100000002 } from './mysql/1765100000002-job-queue-paused';
import { JobQueuePausedPostgres1765100000002 } from './postgres/1765100000002-job-queue-paused';
import { JobQueuePausedSqlite1765100000002 } from './sqlite/1765100000002-job-queue-paused';
import { JobQueueSchedulesMysql1765500000001 } from './mysql/1765500000001-job-queue-schedules';
import { JobQueueFindIndexesPostgres1766000000001 } from './postgres/1766000000001-job-queue-find-indexes';
import { JobQueueSettledInCompletePostgres1766000000002 } from './postgres/1766000000002-job-queue-settled-in-complete';
import { JobQueueNextGroupsProcedureMysql1766500000001 } from './mysql/1766500000001-job-queue-next-groups-procedure';
import { JobQueueSchedulesPostgres1765500000001 } from './postgres/1765500000001-job-queue-schedules';
import { JobQueueReadyGroupsPlpgsqlPostgres1766500000001 } from './postgres/1766500000001-job-queue-ready-groups-plpgsql';
import { JobQueueSchedulesSqlite1765500000001 } from './sqlite/1765500000001-job-queue-schedules';
import { JobQueueTraceContextPostgres1767100000001 } from './postgres/1767100000001-job-queue-trace-context';
import { JobQueueTraceContextMysql1767100000001 } from './mysql/1767100000001-job-queue-trace-context';
import { JobQueueTraceContextSqlite1767100000001 } from './sqlite/1767100000001-job-queue-trace-context';
import { JobQueuePromotionCursorSqlite1767200000001 } from './sqlite/1767200000001-job-queue-promotion-cursor';
import { JobQueueRateLimitsMysql1767300000001 } from './mysql/1767300000001-job-queue-rate-limits';
import { JobQueueRateLimitsPostgres1767300000001 } from './postgres/1767300000001-job-queue-rate-limits';
import { JobQueueRateLimitsSqlite1767300000001 } from './sqlite/1767300000001-job-queue-rate-limits';
import { JobQueueKeysMysql1767300000002 } from './mysql/1767300000002-job-queue-keys';
import { JobQueueNextGroupsRunAfterMysql1767400000001 } from './mysql/1767400000001-job-queue-next-groups-run-after';
import { JobQueueRotationWalkMysql1767600000001 } from './mysql/1767600000001-job-queue-rotation-walk';
import { JobQueueKeysPostgres1767300000002 } from './postgres/1767300000002-job-queue-keys';
import { JobQueueRotationNewVisitPostgres1767400000001 } from './postgres/1767400000001-job-queue-rotation-new-visit';
import { JobQueueTracedEnqueueOnePostgres1767500000001 } from './postgres/1767500000001-job-queue-traced-enqueue-one';
import { JobQueueCompleteViewsPostgres1767500000002 } from './postgres/1767500000002-job-queue-complete-views';
import { JobQueueKeysSqlite1767300000002 } from './sqlite/1767300000002-job-queue-keys';
import { JobQueueReadyByTypeMysql1767700000001 } from './mysql/1767700000001-job-queue-ready-by-type';
import { JobQueuePromotionCursorMysql1767900000002 } from './mysql/1767900000002-job-queue-promotion-cursor';
import { JobQueueRotationWalkFloorsMysql1768200000001 } from './mysql/1768200000001-job-queue-rotation-walk-floors';
import { JobQueueWalkPausedTableMysql1768300000001 } from './mysql/1768300000001-job-queue-walk-paused-table';
import { JobQueueReadyByTypePostgres1767700000001 } from './postgres/1767700000001-job-queue-ready-by-type';
import { JobQueuePromotionOrderPostgres1767800000001 } from './postgres/1767800000001-job-queue-promotion-order';
import { JobQueueClaimUnionAllPostgres1767900000001 } from './postgres/1767900000001-job-queue-claim-union-all';
import { JobQueuePromotionSlicesPostgres1767900000002 } from './postgres/1767900000002-job-queue-promotion-slices';
import { JobQueueReadyGroupsBoundedPostgres1768000000001 } from './postgres/1768000000001-job-queue-ready-groups-bounded';
import { JobQueueRotationClaimsThroughClaimPostgres1768000000002 } from './postgres/1768000000002-job-queue-rotation-claims-through-claim';
import { JobQueueCompleteThenClaimPostgres1768100000001 } from './postgres/1768100000001-job-queue-complete-then-claim';
import { JobQueueReadyGroupsPausedPostgres1768300000001 } from './postgres/1768300000001-job-queue-ready-groups-paused';
import { JobQueueDepsWithoutForeignKeysPostgres1768400000001 } from './postgres/1768400000001-job-queue-deps-without-foreign-keys';
import { JobQueueDepsWithoutForeignKeysMysql1768400000001 } from './mysql/1768400000001-job-queue-deps-without-foreign-keys';
import { JobQueueReadyDueFilterPostgres1768500000001 } from './postgres/1768500000001-job-queue-ready-due-filter';
import { JobQueueReadyDueFilterMysql1768500000001 } from './mysql/1768500000001-job-queue-ready-due-filter';
import { JobQueueReadyDueFilterSqlite1768500000001 } from './sqlite/1768500000001-job-queue-ready-due-filter';
import { JobQueueVersionsPostgres1768600000001 } from './postgres/1768600000001-job-queue-versions';
import { JobQueueReadyDueOrderPostgres1768700000001 } from './postgres/1768700000001-job-queue-ready-due-order';
import { JobQueueWeightSetsPostgres1768800000001 } from './postgres/1768800000001-job-queue-weight-sets';
import { JobQueueTraceUpstreamLinksPostgres1769000000002 } from './postgres/1769000000002-job-queue-trace-upstream-links';
import { JobQueueParentIdIndexPostgres1769100000001 } from './postgres/1769100000001-job-queue-parent-id-index';
import { JobQueueFailFunctionPostgres1769200000001 } from './postgres/1769200000001-job-queue-fail-function';
import { JobQueuePausedWritesPostgres1769200000002 } from './postgres/1769200000002-job-queue-paused-writes';
import { JobQueuePausedWritesSqlite1769100000002 } from './sqlite/1769100000002-job-queue-paused-writes';
import { JobQueueVersionsMysql1768600000001 } from './mysql/1768600000001-job-queue-versions';
import { JobQueueReadyDueOrderMysql1768700000001 } from './mysql/1768700000001-job-queue-ready-due-order';
import { JobQueueWalkHeadsBelowMysql1768800000001 } from './mysql/1768800000001-job-queue-walk-heads-below';
import { JobQueueVersionsSqlite1768600000001 } from './sqlite/1768600000001-job-queue-versions';
import { JobQueueReadyDueOrderSqlite1768700000001 } from './sqlite/1768700000001-job-queue-ready-due-order';
import { JobQueueInFlightByStateSqlite1768900000001 } from './sqlite/1768900000001-job-queue-in-flight-by-state';
import { JobQueueReadyByTypeSqlite1767700000001 } from './sqlite/1767700000001-job-queue-ready-by-type';
import { JobQueueScheduleDeclarationsPostgres1769000000001 } from './postgres/1769000000001-job-queue-schedule-declarations';
import { JobQueueScheduleDeclarationsMysql1769000000001 } from './mysql/1769000000001-job-queue-schedule-declarations';
import { JobQueueScheduleDeclarationsSqlite1769000000001 } from './sqlite/1769000000001-job-queue-schedule-declarations';
import { JobQueueValuesLastSqlite1769100000001 } from './sqlite/1769100000001-job-queue-values-last';
import { JobQueueLogsPostgres1769300000001 } from './postgres/1769300000001-job-queue-logs';
import { JobQueueSnoozesPostgres1769400000001 } from './postgres/1769400000001-job-queue-snoozes';
import { JobQueueLogsMysql1769300000001 } from './mysql/1769300000001-job-queue-logs';
import { JobQueueSnoozesMysql1769400000001 } from './mysql/1769400000001-job-queue-snoozes';
import { JobQueueLogsSqlite1769300000001 } from './sqlite/1769300000001-job-queue-logs';
import { JobQueueSnoozesSqlite1769400000001 } from './sqlite/1769400000001-job-queue-snoozes';
import { JobQueueErrorLinesPostgres1769500000001 } from './postgres/1769500000001-job-queue-error-lines';
import { JobQueueAllowFailurePostgres1769600000001 } from './postgres/1769600000001-job-queue-allow-failure';
import { JobQueueErrorLinesMysql1769500000001 } from './mysql/1769500000001-job-queue-error-lines';
import { JobQueueAllowFailureMysql1769600000001 } from './mysql/1769600000001-job-queue-allow-failure';
import { JobQueueErrorLinesSqlite1769500000001 } from './sqlite/1769500000001-job-queue-error-lines';
import { JobQueueAllowFailureSqlite1769600000001 } from './sqlite/1769600000001-job-queue-allow-failure';
import { JobQueueTickerPostgres1769700000001 } from './postgres/1769700000001-job-queue-ticker';
import { JobQueueTickerMysql1769700000001 } from './mysql/1769700000001-job-queue-ticker';
import { JobQueueWalkJumpMysql1769900000001 } from './mysql/1769900000001-job-queue-walk-jump';
import { JobQueueTickerSqlite1769700000001 } from './sqlite/1769700000001-job-queue-ticker';
import { JobQueueScheduleIndexPostgres1769800000001 } from './postgres/1769800000001-job-queue-schedule-index';
import { JobQueueReadyGroupsJumpPostgres1769900000001 } from './postgres/1769900000001-job-queue-ready-groups-jump';
import { JobQueueReadyTypeGroupIndexPostgres1770000000001 } from './postgres/1770000000001-job-queue-ready-type-group-index';
import { JobQueueReadyTypeGroupIndexMysql1770000000001 } from './mysql/1770000000001-job-queue-ready-type-group-index';
import { JobQueueReadyTypeGroupIndexSqlite1770000000001 } from './sqlite/1770000000001-job-queue-ready-type-group-index';
import { JobQueueRotationCursorPerTypesPostgres1770100000001 } from './postgres/1770100000001-job-queue-rotation-cursor-per-types';
import { JobQueueRotationCursorPerTypesMysql1770100000001 } from './mysql/1770100000001-job-queue-rotation-cursor-per-types';
import { JobQueueScheduleIndexSqlite1769800000001 } from './sqlite/1769800000001-job-queue-schedule-index';

const MIGRATIONS: Record<Dialect, ReadonlyArray<new () => JobQueueMigration>> = {
  postgres: [
    JobQueueInitPostgres1764403200000,
    JobQueueLimitsPostgres1764489600000,
    JobQueueArchivePostgres1764576000000,
    JobQueueClaimFunctionPostgres1764662400000,
    JobQueueCompleteFunctionPostgres1764748800000,
    JobQueueEnqueueFunctionPostgres1764835200000,
    JobQueueRotationPostgres1765000000001,
    JobQueueSettledNotifyPostgres1765400000001,
    JobQueueQueryIndexesPostgres1765100000001,
    JobQueuePausedPostgres1765100000002,
    JobQueueSchedulesPostgres1765500000001,
    JobQueueFindIndexesPostgres1766000000001,
    JobQueueSettledInCompletePostgres1766000000002,
    JobQueueReadyGroupsPlpgsqlPostgres1766500000001,
    JobQueueTraceContextPostgres1767100000001,
    JobQueueRateLimitsPostgres1767300000001,
    JobQueueKeysPostgres1767300000002,
    JobQueueRotationNewVisitPostgres1767400000001,
    JobQueueTracedEnqueueOnePostgres1767500000001,
    JobQueueCompleteViewsPostgres1767500000002,
    JobQueueReadyByTypePostgres1767700000001,
    JobQueuePromotionOrderPostgres1767800000001,
    JobQueueClaimUnionAllPostgres1767900000001,
    JobQueuePromotionSlicesPostgres1767900000002,
    JobQueueReadyGroupsBoundedPostgres1768000000001,
    JobQueueRotationClaimsThroughClaimPostgres1768000000002,
    JobQueueCompleteThenClaimPostgres1768100000001,
    JobQueueReadyGroupsPausedPostgres1768300000001,
    JobQueueDepsWithoutForeignKeysPostgres1768400000001,
    JobQueueReadyDueFilterPostgres1768500000001,
    JobQueueVersionsPostgres1768600000001,
    JobQueueReadyDueOrderPostgres1768700000001,
    JobQueueWeightSetsPostgres1768800000001,
    JobQueueScheduleDeclarationsPostgres1769000000001,
    JobQueueTraceUpstreamLinksPostgres1769000000002,
    JobQueueParentIdIndexPostgres1769100000001,
    JobQueueFailFunctionPostgres1769200000001,
    JobQueuePausedWritesPostgres1769200000002,
    JobQueueLogsPostgres1769300000001,
    JobQueueSnoozesPostgres1769400000001,
    JobQueueErrorLinesPostgres1769500000001,
    JobQueueAllowFailurePostgres1769600000001,
    JobQueueTickerPostgres1769700000001,
    JobQueueScheduleIndexPostgres1769800000001,
    JobQueueReadyGroupsJumpPostgres1769900000001,
    JobQueueReadyTypeGroupIndexPostgres1770000000001,
    JobQueueRotationCursorPerTypesPostgres1770100000001,
  ],
  mysql: [
    JobQueueInitMysql1764403200000,
    JobQueueLimitsMysql1764489600000,
    JobQueueArchiveMysql1764576000000,
    JobQueueRotationMysql1765000000001,
    JobQueueQueryIndexesMysql1765100000001,
    JobQueuePausedMysql1765100000002,
    JobQueueSchedulesMysql1765500000001,
    JobQueueNextGroupsProcedureMysql1766500000001,
    JobQueueTraceContextMysql1767100000001,
    JobQueueRateLimitsMysql1767300000001,
    JobQueueKeysMysql1767300000002,
    JobQueueNextGroupsRunAfterMysql1767400000001,
    JobQueueRotationWalkMysql1767600000001,
    JobQueueReadyByTypeMysql1767700000001,
    JobQueuePromotionCursorMysql1767900000002,
    JobQueueRotationWalkFloorsMysql1768200000001,
    JobQueueWalkPausedTableMysql1768300000001,
    JobQueueDepsWithoutForeignKeysMysql1768400000001,
    JobQueueReadyDueFilterMysql1768500000001,
    JobQueueVersionsMysql1768600000001,
    JobQueueReadyDueOrderMysql1768700000001,
    JobQueueWalkHeadsBelowMysql1768800000001,
    JobQueueScheduleDeclarationsMysql1769000000001,
    JobQueueLogsMysql1769300000001,
    JobQueueSnoozesMysql1769400000001,
    JobQueueErrorLinesMysql1769500000001,
    JobQueueAllowFailureMysql1769600000001,
    JobQueueTickerMysql1769700000001,
    JobQueueWalkJumpMysql1769900000001,
    JobQueueReadyTypeGroupIndexMysql1770000000001,
    JobQueueRotationCursorPerTypesMysql1770100000001,
  ],
  sqlite: [
    JobQueueInitSqlite1764403200000,
    JobQueueLimitsSqlite1764489600000,
    JobQueueArchiveSqlite1764576000000,
    JobQueuePartialKeyIndexSqlite1764662400000,
    JobQueueRotationSqlite1765000000001,
    JobQueueQueryIndexesSqlite1765100000001,
    JobQueuePausedSqlite1765100000002,
    JobQueueSchedulesSqlite1765500000001,
    JobQueueTraceContextSqlite1767100000001,
    JobQueuePromotionCursorSqlite1767200000001,
    JobQueueRateLimitsSqlite1767300000001,
    JobQueueKeysSqlite1767300000002,
    JobQueueReadyByTypeSqlite1767700000001,
    JobQueueReadyDueFilterSqlite1768500000001,
    JobQueueVersionsSqlite1768600000001,
    JobQueueReadyDueOrderSqlite1768700000001,
    JobQueueInFlightByStateSqlite1768900000001,
    JobQueueScheduleDeclarationsSqlite1769000000001,
    JobQueueValuesLastSqlite1769100000001,
    JobQueuePausedWritesSqlite1769100000002,
    JobQueueLogsSqlite1769300000001,
    JobQueueSnoozesSqlite1769400000001,
    JobQueueErrorLinesSqlite1769500000001,
    JobQueueAllowFailureSqlite1769600000001,
    JobQueueTickerSqlite1769700000001,
    JobQueueScheduleIndexSqlite1769800000001,
    JobQueueReadyTypeGroupIndexSqlite1770000000001,
  ],
};

/** The schema migrations of one dialect, in order. */
export function jobQueueMigrations(dialect: Dialect): JobQueueMigration[] {
  return MIGRATIONS[dialect].map((Migration) => new Migration());
}

/**
 * The same migrations as classes, for a TypeORM DataSource's `migrations` option, which takes
 * classes (or globs) and constructs them itself.
 */
export function jobQueueMigrationClasses(dialect: Dialect): Array<new () => JobQueueMigration> {
  return [...MIGRATIONS[dialect]];
}

export { JobQueueMigration } from './job-queue-migration';

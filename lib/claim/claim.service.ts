import { Injectable } from '@nestjs/common';
import { isSqliteBusy } from '../database/db-errors';
import { JobQueueDatabase } from '../database/job-queue.database';
import type { JobRecord } from '../database/job-row';
import type { SqlExecutor } from '../database/sql-executor';
import type { ClaimRequest } from './claim-request';
import { claimMysql } from './mysql.claim';
import { claimPostgres } from './postgres.claim';
import { claimSqlite } from './sqlite.claim';

const BRANCHES: Record<string, (tx: SqlExecutor, request: ClaimRequest) => Promise<JobRecord[]>> = {
  postgres: claimPostgres,
  mysql: claimMysql,
  sqlite: claimSqlite,
};

/**
 * Atomically leases ready jobs: one transaction, one branch per dialect. Every claimed row is
 * written with this owner, a lease deadline and one more attempt; the rows come back ordered
 * by priority (highest first), then id.
 */
@Injectable()
export class ClaimService {
  constructor(private readonly db: JobQueueDatabase) {}

  async claim(request: ClaimRequest): Promise<JobRecord[]> {
    if (!request.types.length || !request.quotas.some((q) => q.limit > 0)) return [];
    const branch = BRANCHES[this.db.dialect.name];
    try {
      const rows = await this.db.transaction((tx) => branch(tx, request), { failWhenBusy: true });
      return rows.sort((a, b) => b.priority - a.priority || a.id - b.id);
    } catch (err) {
      // Another process holds SQLite's write lock: nothing claimed, the next tick tries again.
      if (isSqliteBusy(err)) return [];
      throw err;
    }
  }
}

import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { JobState } from '../job.types';

/**
 * The `jobs` table, for applications that want to query it with TypeORM. The schema itself is
 * owned by the shipped migrations: do not let `synchronize` manage it (it would drop the
 * partial indexes). `args` and `result` hold JSON text; times are UTC.
 */
@Entity({ name: 'jobs', synchronize: false })
export class JobEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id!: string;
  @Column({ type: 'varchar', length: 200 }) type!: string;
  @Column({ type: 'varchar', length: 200, nullable: true }) ref!: string | null;
  @Column({ type: 'text' }) args!: string;
  @Column({ type: 'text', nullable: true }) result!: string | null;
  @Column({ type: 'varchar', length: 16 }) state!: JobState;
  @Column({ name: 'parent_id', type: 'bigint', nullable: true }) parentId!: string | null;
  @Column({ name: 'is_container', type: 'smallint', default: 0 }) isContainer!: number;
  @Column({ name: 'pending_deps', type: 'int', default: 0 }) pendingDeps!: number;
  @Column({ name: 'pending_children', type: 'int', default: 0 }) pendingChildren!: number;
  @Column({ name: 'failed_children', type: 'int', default: 0 }) failedChildren!: number;
  @Column({ name: 'group_key', type: 'varchar', length: 200 }) groupKey!: string;
  @Column({ type: 'int', default: 1 }) weight!: number;
  @Column({ type: 'int', default: 0 }) priority!: number;
  @Column({ name: 'lease_owner', type: 'varchar', length: 128, nullable: true }) leaseOwner!: string | null;
  @Column({ name: 'lease_expires', type: Date, nullable: true }) leaseExpires!: Date | null;
  @Column({ name: 'heartbeat_at', type: Date, nullable: true }) heartbeatAt!: Date | null;
  @Column({ name: 'run_after' }) runAfter!: Date;
  @Column({ type: 'int', default: 0 }) attempts!: number;
  @Column({ name: 'max_attempts', type: 'int' }) maxAttempts!: number;
  @Column({ type: 'int', default: 0 }) snoozes!: number;
  @Column({ name: 'last_error', type: 'text', nullable: true }) lastError!: string | null;
  @Column({ name: 'timeout_ms', type: 'int', nullable: true }) timeoutMs!: number | null;
  @Column({ type: 'smallint', default: 0 }) progress!: number;
  @Column({ name: 'current_stage', type: 'varchar', length: 200, nullable: true }) currentStage!: string | null;
  @Column({ name: 'job_key', type: 'varchar', length: 255, nullable: true }) key!: string | null;
  @Column({ name: 'created_at' }) createdAt!: Date;
  @Column({ name: 'started_at', type: Date, nullable: true }) startedAt!: Date | null;
  @Column({ name: 'finished_at', type: Date, nullable: true }) finishedAt!: Date | null;
  @Column({ name: 'updated_at' }) updatedAt!: Date;
}

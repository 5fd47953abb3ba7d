import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An edge of the readiness graph: `jobId` waits for `dependsOnId`. */
@Entity({ name: 'job_deps', synchronize: false })
export class JobDepEntity {
  @PrimaryColumn({ name: 'job_id', type: 'bigint' }) jobId!: string;
  @PrimaryColumn({ name: 'depends_on_id', type: 'bigint' }) dependsOnId!: string;
  /** 1: `jobId` runs once `dependsOnId` finishes, whether it succeeded or not. */
  @Column({ name: 'allow_failure', type: 'smallint', default: 0 }) allowFailure!: number;
}

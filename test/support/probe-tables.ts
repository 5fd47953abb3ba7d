import type { QueueApp } from './queue-app';

/**
 * Test-only tables the worker processes write to, and a trigger that records every transition
 * of a job to `done`: "finalized exactly once" is then a count per job, not an inference from
 * the final state.
 */
export async function installProbes(app: QueueApp): Promise<void> {
  const d = app.db.dialect.name;
  const q = (text: string) => app.rows(text);
  const bigint = d === 'sqlite' ? 'INTEGER' : 'BIGINT';
  const text = d === 'mysql' ? 'VARCHAR(255)' : 'TEXT';
  await q(`CREATE TABLE IF NOT EXISTS executions (job_id ${bigint} NOT NULL, worker ${text} NOT NULL, attempt INTEGER NOT NULL, finished INTEGER NOT NULL DEFAULT 0)`);
  await q(`CREATE TABLE IF NOT EXISTS finalize_audit (job_id ${bigint} NOT NULL, state ${text} NOT NULL, worker ${text})`);
  await q(`CREATE TABLE IF NOT EXISTS cap_probe (name ${d === 'mysql' ? 'VARCHAR(255)' : 'TEXT'} PRIMARY KEY, current INTEGER NOT NULL DEFAULT 0, max_seen INTEGER NOT NULL DEFAULT 0)`);
  if (d === 'postgres') {
    await q(`CREATE OR REPLACE FUNCTION audit_finalize() RETURNS trigger AS $$
      BEGIN
        IF NEW.state IN ('done', 'failed') AND OLD.state IS DISTINCT FROM NEW.state THEN
          INSERT INTO finalize_audit (job_id, state, worker) VALUES (NEW.id, NEW.state, OLD.lease_owner);
        END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql`);
    await q(`DROP TRIGGER IF EXISTS jobs_audit ON jobs`);
    await q(`CREATE TRIGGER jobs_audit AFTER UPDATE OF state ON jobs FOR EACH ROW EXECUTE FUNCTION audit_finalize()`);
  } else if (d === 'mysql') {
    await q(`DROP TRIGGER IF EXISTS jobs_audit`);
    await q(`CREATE TRIGGER jobs_audit AFTER UPDATE ON jobs FOR EACH ROW
      BEGIN
        IF NEW.state IN ('done', 'failed') AND NEW.state <> OLD.state THEN
          INSERT INTO finalize_audit (job_id, state, worker) VALUES (NEW.id, NEW.state, OLD.lease_owner);
        END IF;
      END`);
  } else {
    await q(`DROP TRIGGER IF EXISTS jobs_audit`);
    await q(`CREATE TRIGGER jobs_audit AFTER UPDATE OF state ON jobs
      WHEN NEW.state IN ('done', 'failed') AND NEW.state <> OLD.state
      BEGIN INSERT INTO finalize_audit (job_id, state, worker) VALUES (NEW.id, NEW.state, OLD.lease_owner); END`);
  }
}

export async function clearProbes(app: QueueApp): Promise<void> {
  for (const t of ['executions', 'finalize_audit', 'cap_probe']) await app.rows(`DELETE FROM ${t}`);
}

/** Finalize count per job id (every transition to done or failed). */
export async function finalizeCounts(app: QueueApp): Promise<Map<number, number>> {
  const rows = await app.rows(`SELECT job_id, COUNT(*) AS n FROM finalize_audit GROUP BY job_id`);
  return new Map(rows.map((r) => [Number(r.job_id), Number(r.n)]));
}

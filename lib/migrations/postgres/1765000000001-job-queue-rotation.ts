import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueRotationPostgres1765000000001 extends JobQueueMigration {
  readonly version = 7;
  readonly name = 'JobQueueRotation1765000000001';
  protected readonly upSql = [
    // The fair-share rotation cursor shared by every worker process: the group being served and
    // how many slots it got in this visit. With more ready groups than slots, claims walk the
    // ready group index from here, so every group is visited once per round whatever its key.
    `CREATE TABLE job_queue_rotation (
      name varchar(64) PRIMARY KEY,
      group_key varchar(200) NOT NULL DEFAULT '',
      served integer NOT NULL DEFAULT 0
    )`,
    `INSERT INTO job_queue_rotation (name) VALUES ('fair-share')`,
    // The rotation claim as one function call (the same walk as lib/claim/rotation.claim.ts, which
    // the other dialects and capped claims use): lock the cursor, visit the groups that follow it
    // in the ready group index, one probe each that also reads the weight of the group's next
    // job (ORDER BY … LIMIT 1, not MIN: see nextReadyGroups), give each its weight in slots (continuing a
    // visit the last claim left unfinished), lock those jobs with SKIP LOCKED, move the cursor,
    // lease. Its cost follows the slots it fills, never the number of groups.
    // $1 owner, $2 types, $3 slots, $4 lease TTL ms, $5 start, $6/$7 group weights from options.
    `CREATE FUNCTION job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])
      RETURNS SETOF jobs
      LANGUAGE plpgsql VOLATILE
      SET enable_bitmapscan = off
      SET enable_sort = off
    AS $body$
    DECLARE
      v_cur text;
      v_served int;
      v_group text;
      v_first text;
      v_wrapped boolean := false;
      v_weight int;
      v_already int;
      v_take int;
      v_left int := $3;
      v_last text;
      v_last_served int;
      v_ids bigint[] := '{}';
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT r.group_key, r.served INTO v_cur, v_served FROM job_queue_rotation r WHERE r.name = 'fair-share' FOR UPDATE;
      IF NOT FOUND THEN v_cur := ''; v_served := 0; END IF;
      v_last := v_cur;
      v_last_served := v_served;
      SELECT j.group_key, j.weight INTO v_group, v_weight FROM jobs j
        WHERE j.state = 'ready' AND j.run_after <= now() AND j.type = ANY ($2) AND j.group_key >= v_cur
        ORDER BY j.group_key, j.priority DESC, j.id LIMIT 1;
      WHILE v_left > 0 LOOP
        IF v_group IS NULL THEN
          EXIT WHEN v_wrapped;
          v_wrapped := true;
          SELECT j.group_key, j.weight INTO v_group, v_weight FROM jobs j
            WHERE j.state = 'ready' AND j.run_after <= now() AND j.type = ANY ($2)
            ORDER BY j.group_key, j.priority DESC, j.id LIMIT 1;
          EXIT WHEN v_group IS NULL;
        END IF;
        EXIT WHEN v_wrapped AND v_first IS NOT NULL AND v_group >= v_first;
        v_first := coalesce(v_first, v_group);
        v_weight := coalesce($7[array_position($6, v_group)], v_weight);
        v_already := CASE WHEN v_group = v_cur THEN v_served ELSE 0 END;
        v_take := least(greatest(coalesce(v_weight, 1), 1) - v_already, v_left);
        IF v_take > 0 THEN
          v_ids := v_ids || ARRAY(
            SELECT j.id FROM jobs j
            WHERE j.state = 'ready' AND j.group_key = v_group AND j.run_after <= now() AND j.type = ANY ($2)
            ORDER BY j.group_key, j.priority DESC, j.id
            LIMIT v_take
            FOR UPDATE SKIP LOCKED);
          v_left := v_left - v_take;
          v_last := v_group;
          v_last_served := v_already + v_take;
        END IF;
        EXIT WHEN v_left <= 0;
        SELECT j.group_key, j.weight INTO v_group, v_weight FROM jobs j
          WHERE j.state = 'ready' AND j.run_after <= now() AND j.type = ANY ($2) AND j.group_key > v_group
          ORDER BY j.group_key, j.priority DESC, j.id LIMIT 1;
      END LOOP;
      IF v_last IS DISTINCT FROM v_cur OR v_last_served <> v_served THEN
        UPDATE job_queue_rotation SET group_key = v_last, served = v_last_served WHERE name = 'fair-share';
      END IF;
      RETURN QUERY
      UPDATE jobs SET
        state = CASE WHEN $5 THEN 'running' ELSE 'leased' END,
        lease_owner = $1,
        lease_expires = now() + $4 * interval '1 millisecond',
        heartbeat_at = now(),
        attempts = jobs.attempts + 1,
        started_at = CASE WHEN $5 THEN now() ELSE jobs.started_at END,
        updated_at = now()
      WHERE jobs.id = ANY (v_ids)
      RETURNING jobs.*;
    END
    $body$`,
  ];
  protected readonly downSql = [
    `DROP FUNCTION job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])`,
    `DROP TABLE job_queue_rotation`,
  ];
}

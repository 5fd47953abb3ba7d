import { rotationCursorName } from '../../lib/claim/rotation-cursor';
import { sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';

/** Puts the rotation cursor of the workers of these types at `group` (its row added if none has claimed yet). */
export async function placeRotationCursor(db: SqlExecutor, types: readonly string[], group: string, served = 0): Promise<void> {
  const name = rotationCursorName(types);
  await db.run(sql`DELETE FROM job_queue_rotation WHERE name = ${name}`);
  await db.run(sql`INSERT INTO job_queue_rotation (name, group_key, served) VALUES (${name}, ${group}, ${served})`);
}

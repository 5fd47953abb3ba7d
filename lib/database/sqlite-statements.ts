import type { Logger } from 'typeorm';
import { assertBoundParameters, type Sql } from './sql';
import type { SqlResult } from './sql-executor';

/** The part of a better-sqlite3 statement the queue uses. */
interface SqliteStatement {
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}

/** The part of a better-sqlite3 database handle the queue uses. */
export interface SqliteHandle {
  prepare(text: string): SqliteStatement;
}

interface Prepared {
  readonly text: string;
  readonly statement: SqliteStatement;
}

/** A step of the shape trie: the statement whose shape ends here, and the steps after it. */
interface ShapeNode {
  prepared?: Prepared;
  next?: Map<unknown, ShapeNode>;
}

/**
 * Shapes longer than this many keys (a multi-row insert, a long list) are found by their text:
 * they are few, their texts are long anyway, and each length would add a branch to the trie.
 */
const SHAPE_KEYS_MAX = 256;
/** Prepared statements kept; past it the caches start over (a rebuilt cache only re-prepares). */
const STATEMENTS_KEPT = 1_000;

/**
 * The queue's SQLite statements straight on better-sqlite3, without a TypeORM QueryRunner (as
 * PostgreSQL and MySQL already run theirs on the driver's connection): the runner's bookkeeping
 * (subscribers, timing, several awaits) was a tenth of a chain link's Node CPU, and its statement
 * cache kept 100 texts, first in first out.
 *
 * A statement is found by its shape (`Sql.collect`: template identities, list lengths, raw
 * texts) rather than its text: building the text of every statement and hashing it for the
 * lookup was another tenth. Synchronous, as the driver is: callers hold the queue's SQLite mutex.
 */
export class SqliteStatements {
  private shapes: ShapeNode = {};
  private readonly byText = new Map<string, Prepared>();
  private kept = 0;

  constructor(
    private readonly handle: SqliteHandle,
    private readonly logger: Logger,
  ) {}

  /** A statement of the queue's SQL builder. */
  run(statement: Sql): SqlResult {
    let params: unknown[] = [];
    let node: ShapeNode = this.shapes;
    let keys = 0;
    const short = statement.collect(params, (key) => {
      if (++keys > SHAPE_KEYS_MAX) return false;
      let next = node.next?.get(key);
      if (!next) (node.next ??= new Map()).set(key, (next = {}));
      node = next;
      return true;
    });
    let prepared = short ? node.prepared : undefined;
    if (!prepared) {
      const rendered = statement.render('sqlite');
      if (!short) params = rendered.params;
      prepared = this.byText.get(rendered.text) ?? this.prepare(rendered.text);
      if (short) node.prepared = prepared;
      else this.byText.set(rendered.text, prepared);
    }
    assertBoundParameters('sqlite', params.length, prepared.text);
    return this.execute(prepared, params);
  }

  /** A fixed statement (BEGIN, COMMIT, ROLLBACK). */
  runText(text: string): SqlResult {
    let prepared = this.byText.get(text);
    if (!prepared) this.byText.set(text, (prepared = this.prepare(text)));
    return this.execute(prepared, []);
  }

  private prepare(text: string): Prepared {
    if (++this.kept > STATEMENTS_KEPT) {
      this.shapes = {};
      this.byText.clear();
      this.kept = 1;
    }
    try {
      return { text, statement: this.handle.prepare(text) };
    } catch (err) {
      // SQL SQLite refuses fails here, before it runs: logged as a failed query all the same.
      this.logger.logQueryError(err as Error, text, []);
      throw err;
    }
  }

  private execute({ text, statement }: Prepared, params: unknown[]): SqlResult {
    this.logger.logQuery(text, params);
    try {
      for (let i = 0; i < params.length; i++) if (typeof params[i] === 'boolean') params[i] = params[i] ? 1 : 0; // better-sqlite3 binds no booleans
      if (statement.reader) return { rows: statement.all(...params) as SqlResult['rows'], affected: 0 };
      return { rows: [], affected: statement.run(...params).changes };
    } catch (err) {
      this.logger.logQueryError(err as Error, text, params);
      throw err;
    }
  }
}

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
 * each length would add a branch to the trie, and their texts are long anyway.
 */
const SHAPE_KEYS_MAX = 256;
/** Prepared statements kept in the trie; past it the trie starts over (a rebuilt cache only re-prepares). */
const STATEMENTS_KEPT = 1_000;
/**
 * SQL text kept prepared, in characters, by the trie and by the text cache each. A compiled
 * statement costs SQLite 40-90 bytes of native memory per character of its text (1.6 MB for a
 * 1,000-row insert): counted in statements only, an application enqueueing batches of 500 sizes
 * held 270 MB more RSS than one of a single size. Large enough for a list of every length up to
 * 1,000 in one statement (about 2 million characters): a working set over the bound re-prepares
 * on every miss, and a statement dropped is freed only when V8 collects it, which memory V8
 * cannot see does not hurry (at 512 KB, lists of random lengths held 1 GB of RSS after 20,000
 * statements). What keeps the texts few is SQL built for it: inserts in binarySlices.
 */
export const SQLITE_TEXT_KEPT = 4 * 1024 * 1024;

/** What the caches hold (for tests and the curious). */
export interface SqliteStatementCounts {
  /** Statements found by their shape, their text in characters, and the trie's nodes. */
  shapes: number;
  shapeChars: number;
  shapeNodes: number;
  /** Long statements found by their text, and their text in characters. */
  texts: number;
  textChars: number;
}

/**
 * The queue's SQLite statements straight on better-sqlite3, without a TypeORM QueryRunner (as
 * PostgreSQL and MySQL already run theirs on the driver's connection): the runner's bookkeeping
 * (subscribers, timing, several awaits) was a tenth of a chain link's Node CPU, and its statement
 * cache kept 100 texts, first in first out.
 *
 * A statement is found by its shape (`Sql.collect`: template identities, list lengths, raw
 * texts) rather than its text: building the text of every statement and hashing it for the
 * lookup was another tenth. Long statements are found by their text, least recently used
 * dropped first. Synchronous, as the driver is: callers hold the queue's SQLite mutex.
 */
export class SqliteStatements {
  private shapes: ShapeNode = {};
  private shapeCount = 0;
  private shapeChars = 0;
  private shapeNodes = 0;
  /** Long statements and fixed texts by text, least recently used first. */
  private readonly byText = new Map<string, Prepared>();
  private textChars = 0;

  constructor(
    private readonly handle: SqliteHandle,
    private readonly logger: Logger,
  ) {}

  get counts(): SqliteStatementCounts {
    return { shapes: this.shapeCount, shapeChars: this.shapeChars, shapeNodes: this.shapeNodes, texts: this.byText.size, textChars: this.textChars };
  }

  /** A statement of the queue's SQL builder. */
  run(statement: Sql): SqlResult {
    // Before the walk, so that the node the walk ends at belongs to the trie kept.
    if (this.shapeCount >= STATEMENTS_KEPT || this.shapeChars > SQLITE_TEXT_KEPT) this.startOver();
    let params: unknown[] = [];
    let node: ShapeNode | undefined = this.shapes;
    let keys = 0;
    // The keys past the last node found: the branch is grown only for a shape that turns out
    // short. Grown as it was walked, every long statement left up to SHAPE_KEYS_MAX nodes that
    // held nothing, and never counted, a trie node per job enqueued in batches of varied sizes.
    let deepest: ShapeNode = this.shapes;
    let missing: unknown[] | undefined;
    const short = statement.collect(params, (key) => {
      if (++keys > SHAPE_KEYS_MAX) return false;
      if (node) {
        const next: ShapeNode | undefined = node.next?.get(key);
        if (next) node = deepest = next;
        else (node = undefined), (missing = [key]);
      } else missing!.push(key);
      return true;
    });
    let prepared = short ? node?.prepared : undefined;
    if (!prepared) {
      const rendered = statement.render('sqlite');
      if (short) {
        prepared = this.prepare(rendered.text);
        if (!node) {
          node = grow(deepest, missing!);
          this.shapeNodes += missing!.length;
        }
        node.prepared = prepared;
        this.shapeCount++;
        this.shapeChars += rendered.text.length;
      } else {
        params = rendered.params;
        prepared = this.byTextOrNew(rendered.text);
      }
    }
    assertBoundParameters('sqlite', params.length, prepared.text);
    return this.execute(prepared, params);
  }

  /** A fixed statement (BEGIN, COMMIT, ROLLBACK). */
  runText(text: string): SqlResult {
    return this.execute(this.byTextOrNew(text), []);
  }

  private byTextOrNew(text: string): Prepared {
    let prepared = this.byText.get(text);
    if (prepared) this.byText.delete(text); // moved to the most recent end
    else {
      prepared = this.prepare(text);
      this.textChars += text.length;
    }
    this.byText.set(text, prepared);
    while (this.textChars > SQLITE_TEXT_KEPT && this.byText.size > 1) {
      const oldest = this.byText.keys().next().value!;
      this.byText.delete(oldest);
      this.textChars -= oldest.length;
    }
    return prepared;
  }

  private startOver(): void {
    this.shapes = {};
    this.shapeCount = 0;
    this.shapeChars = 0;
    this.shapeNodes = 0;
  }

  private prepare(text: string): Prepared {
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

/** Adds the branch of `keys` below `from`; returns its last node. */
function grow(from: ShapeNode, keys: readonly unknown[]): ShapeNode {
  let node = from;
  for (const key of keys) {
    const next: ShapeNode = {};
    (node.next ??= new Map()).set(key, next);
    node = next;
  }
  return node;
}

import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import type { Dialect } from './dialect.js';
import type { Database } from './schema.js';

/** Stands in for a value while the statement is built; see `compiledOnce`. */
export type Param = (name: string) => never;

const MARK = '\u0000mailroom-param:';

interface Compiled {
  sql: string;
  /** For each bound parameter: the name of the value to bind, or a constant of the builder. */
  binds: Array<{ name: string } | { constant: unknown }>;
}

/**
 * A statement built with the query builder once per dialect and from then on only re-bound.
 * Building and compiling a query cost ~15–20 µs of JavaScript each, more than SQLite takes to
 * run an insert: the four inserts and the idempotency record of a send spent ~75 µs a send
 * in Kysely. `build` receives `p(name)` to mark where each value goes; values the builder is
 * given directly (constants) are kept as they are.
 */
export function compiledOnce<Values extends Record<string, unknown>, Row = unknown>(
  build: (db: Kysely<Database>, p: Param) => Compilable<Row>,
): (db: Kysely<Database>, dialect: Dialect, values: Values) => Promise<QueryResult<Row>> {
  const byDialect = new Map<Dialect, Compiled>();
  return (db, dialect, values) => {
    let compiled = byDialect.get(dialect);
    if (compiled === undefined) {
      const c = build(db, ((name: string) => `${MARK}${name}`) as Param).compile();
      compiled = {
        sql: c.sql,
        binds: c.parameters.map((v) =>
          typeof v === 'string' && v.startsWith(MARK) ? { name: v.slice(MARK.length) } : { constant: v },
        ),
      };
      byDialect.set(dialect, compiled);
    }
    const parameters = compiled.binds.map((b) => ('name' in b ? values[b.name] : b.constant));
    // The SQL is the builder's own, so its rows are the builder's row type.
    return db.executeQuery(CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<Row>);
  };
}

import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { fromDatabase, storageTrouble } from '../errors/storage-trouble.js';

/**
 * PostgreSQL parses, analyses and plans every statement sent unnamed, each time. For the queue's
 * claim (one statement: UPDATE … RETURNING, an INSERT of events and a join, queue-postgres.ts)
 * planning took 0.34 ms against 0.25 ms executing it (EXPLAIN ANALYZE, 3,000 queued). Sent as a
 * named prepared statement, a connection parses it once and, after five runs, reuses a generic
 * plan when that costs no more than the custom ones. bench:pg, 8 loops × batch 1: PostgreSQL's
 * CPU a job 1.35–1.99 → 0.95–1.42 ms, jobs/s 0.63–0.65× → 0.75–0.86× pg-boss (statements alone
 * 0.70–0.73× → 0.93–0.97×).
 *
 * Which statements get a name: the ones with parameters (Kysely's, not `begin`/`commit`, and
 * never a multi-command string, which the extended protocol refuses) once they have run
 * HOT_AFTER times in this pool, so the handful on the hot path are named and a one-off admin
 * query is not. Each name stays prepared on every connection that ran it, for its life, holding
 * a parse tree and plans in that backend: MAX_NAMED bounds them (at most 100 × the pool's 10
 * connections), and MAX_COUNTED bounds this side's map of texts seen but not yet hot. Names are
 * handed out per exact text, so two statements never share one.
 *
 * A statement that selects or returns `*` is never named. Prepared, it would fail after another
 * process's migration adds a column to its table ("cached plan must not change result type"),
 * on every run for the life of the connection: a rolling upgrade would break the processes of
 * the old release still serving. Unnamed, it just returns the new column too. Statements naming
 * their columns are unaffected by an added column. The claim and mark-sent name theirs.
 */
const SELECTS_STAR = /(?:\bselect|\breturning|,)\s+(?:(?:"[^"]*"|\w+)\.)?\*/i;

export const HOT_AFTER = 3;
export const MAX_NAMED = 100;
export const MAX_COUNTED = 2_000;

export interface NamingLimits {
  hotAfter: number;
  maxNamed: number;
  maxCounted: number;
}

/**
 * How the pool copes with a database that goes away (issue 25): each query gets a client-side
 * time bound, and a client whose query failed for lack of the database (or timed out) is
 * destroyed on release instead of going back to the pool, so the next checkout connects anew.
 */
export interface PoolGuard {
  /** Client-side bound of one query (ms); 0 or absent: none. See dialect.ts for the number. */
  queryTimeoutMs?: number;
  /** Hears every failed query (it classifies) and every query that worked. */
  health?: { report(err: unknown): unknown; reached(): void };
  /**
   * Whether sessions start with a server-side statement_timeout (the URL's `statement_timeout`,
   * pg-options.ts); default true. When false, UNBOUNDED_SESSION and BOUNDED_SESSION are not
   * sent (there is nothing to lift or restore, and behind PgBouncer in transaction mode a
   * session SET would stay on a server connection other clients share); they still lift and
   * restore the client-side bound.
   */
  statementTimeout?: boolean;
}

/**
 * After a connect that failed for lack of the database, further checkouts within the cool-down
 * fail at once with that error (the request answers 503 at once instead of each trying, and a
 * server coming back is not met by a burst of every waiting request): 100 ms, doubled on each
 * failure after the last, at most 2 s; a connect that works ends it. When it runs out, one
 * attempt goes through and the others wait for its outcome. Recovery thus lags the server by at
 * most 2 s (README, "When PostgreSQL goes away").
 */
export const CONNECT_COOL_DOWN_MS = { first: 100, max: 2_000 };

/**
 * A session that runs `set statement_timeout = 0` (the migrations: an index build on a large
 * table may take minutes) lifts the client-side bound too, until `reset statement_timeout`.
 */
export const UNBOUNDED_SESSION = 'set statement_timeout = 0';
export const BOUNDED_SESSION = 'reset statement_timeout';

export function namingPool(
  pool: pg.Pool,
  limits: NamingLimits = { hotAfter: HOT_AFTER, maxNamed: MAX_NAMED, maxCounted: MAX_COUNTED },
  guard: PoolGuard = {},
): PostgresPool {
  const unbounded = new WeakSet<pg.PoolClient>();
  const seen = new Map<string, number>();
  const names = new Map<string, string>();

  /** The name for this text, once it is hot and while names are left; else undefined. */
  const nameOf = (text: string): string | undefined => {
    const named = names.get(text);
    if (named !== undefined) return named;
    // A named text skips this test: the hot path pays one map lookup, not a scan of the text.
    if (names.size >= limits.maxNamed || SELECTS_STAR.test(text)) return undefined;
    const uses = (seen.get(text) ?? 0) + 1;
    if (uses < limits.hotAfter) {
      // Full of texts that never came back: start counting afresh, so a statement that turns
      // hot late (a first webhook endpoint, days after start) can still be named.
      if (!seen.has(text) && seen.size >= limits.maxCounted) seen.clear();
      seen.set(text, uses);
      return undefined;
    }
    seen.delete(text);
    const name = `mailroom_${names.size + 1}`;
    names.set(text, name);
    return name;
  };

  // The connect cool-down (CONNECT_COOL_DOWN_MS): its length now (0: none) and end, the error
  // that began it, and the one attempt under way once it ran out.
  let coolMs = 0;
  let coolUntil = 0;
  let refusal: unknown;
  let probe: Promise<unknown> | undefined;
  const checkout = async (): Promise<pg.PoolClient> => {
    for (;;) {
      if (coolMs > 0 && Date.now() < coolUntil) {
        guard.health?.report(refusal);
        throw refusal;
      }
      if (probe === undefined) break;
      await probe;
    }
    const attempt = pool.connect().then(
      (client) => {
        coolMs = 0;
        return client;
      },
      (err: unknown) => {
        fromDatabase(err);
        guard.health?.report(err);
        if (storageTrouble(err) === 'database_unavailable') {
          coolMs = coolMs === 0 ? CONNECT_COOL_DOWN_MS.first : Math.min(coolMs * 2, CONNECT_COOL_DOWN_MS.max);
          coolUntil = Date.now() + coolMs;
          refusal = err;
        }
        throw err;
      },
    );
    // While the database is away, one attempt at a time: the others wait for its outcome.
    if (coolMs > 0) {
      const settled = attempt.then(
        () => undefined,
        () => undefined,
      );
      probe = settled;
      void settled.then(() => {
        if (probe === settled) probe = undefined;
      });
    }
    return attempt;
  };

  return {
    async connect(): Promise<PostgresPoolClient> {
      const raw = await checkout();
      // Set when a query failed in a way that leaves the connection unusable or unknown.
      let broken: Error | undefined;
      const watched = <T>(p: Promise<T>): Promise<T> =>
        p.then(
          (r) => {
            guard.health?.reached();
            return r;
          },
          (err: unknown) => {
            fromDatabase(err);
            // A timed-out query may still be running on the server: the connection is not reused.
            if (guard.health?.report(err) === 'database_unavailable' || (err as Error).message === 'Query read timeout')
              broken = err as Error;
            throw err;
          },
        );
      function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
      function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
      function query<R>(
        sqlOrCursor: string | PostgresCursor<R>,
        parameters?: ReadonlyArray<unknown>,
      ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
        if (typeof sqlOrCursor !== 'string')
          return raw.query(sqlOrCursor as unknown as pg.Submittable) as unknown as PostgresCursor<R>;
        if (sqlOrCursor === UNBOUNDED_SESSION) unbounded.add(raw);
        if (sqlOrCursor === BOUNDED_SESSION) unbounded.delete(raw);
        if (guard.statementTimeout === false && (sqlOrCursor === UNBOUNDED_SESSION || sqlOrCursor === BOUNDED_SESSION)) {
          return Promise.resolve({ command: 'SET', rowCount: 0, rows: [] }) as unknown as Promise<PostgresQueryResult<R>>;
        }
        const values = [...(parameters ?? [])];
        const name = values.length > 0 ? nameOf(sqlOrCursor) : undefined;
        // pg reads query_timeout per query; an unset one falls back to the pool's (none).
        const timeout =
          unbounded.has(raw) || guard.queryTimeoutMs === undefined || guard.queryTimeoutMs <= 0
            ? {}
            : { query_timeout: guard.queryTimeoutMs };
        const result = raw.query({ text: sqlOrCursor, values, ...(name === undefined ? {} : { name }), ...timeout });
        return watched(result) as unknown as Promise<PostgresQueryResult<R>>;
      }
      return { query, release: () => raw.release(broken) };
    },
    end: () => pool.end(),
  };
}

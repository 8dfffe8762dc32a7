/**
 * Reads mailroom's own query parameters off a `postgres://` URL (pg would pass unknown ones on
 * to the server) and says what the pool sends. Pure, so the parsing is tested on its own.
 *
 * - `schema=NAME`: every table in that schema (created if missing; tests use one schema each).
 * - `prepare=on|off`: named prepared statements (prepared-pool.ts); off behind a pooler that
 *   cannot keep them (PgBouncer in transaction mode before 1.21).
 * - `statement_timeout=MS|off`: the server-side bound of one statement, sent in the startup
 *   packet (`options: -c statement_timeout=…`). Default 15000, but `off` when `prepare=off`:
 *   PgBouncer refuses a startup packet with `options` ("unsupported startup parameter") unless
 *   told `ignore_startup_parameters = options`. The client-side query timeout (20 s,
 *   dialect.ts QUERY_TIMEOUT_MS) bounds a hung query either way.
 * No `options` at all is sent when neither a statement timeout nor a schema is wanted.
 */
export interface PostgresUrlOptions {
  /** The URL without mailroom's parameters. */
  connectionString: string;
  schema: string | undefined;
  prepare: boolean;
  /** The server-side statement timeout (ms), or undefined when off. */
  statementTimeoutMs: number | undefined;
  /** pg's startup `options`, or undefined to send none. */
  options: string | undefined;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;

export function postgresUrlOptions(url: string): PostgresUrlOptions {
  const parsed = new URL(url);
  const take = (name: string): string | null => {
    const value = parsed.searchParams.get(name);
    parsed.searchParams.delete(name);
    return value;
  };
  const schema = take('schema');
  const prepare = take('prepare') ?? 'on';
  const timeout = take('statement_timeout');
  if (prepare !== 'on' && prepare !== 'off')
    throw new Error(`MAILROOM_DATABASE_URL: prepare must be on or off, not "${prepare}"`);
  if (schema !== null && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`MAILROOM_DATABASE_URL: schema "${schema}" must be a plain lower-case identifier`);
  }
  let statementTimeoutMs: number | undefined;
  if (timeout === null) statementTimeoutMs = prepare === 'off' ? undefined : DEFAULT_STATEMENT_TIMEOUT_MS;
  else if (timeout === 'off') statementTimeoutMs = undefined;
  else if (/^[1-9][0-9]{0,8}$/.test(timeout)) statementTimeoutMs = Number(timeout);
  else
    throw new Error(
      `MAILROOM_DATABASE_URL: statement_timeout must be a whole number of milliseconds (1 or more) or off, not "${timeout}"`,
    );
  const parts = [
    ...(statementTimeoutMs === undefined ? [] : [`-c statement_timeout=${statementTimeoutMs}`]),
    ...(schema === null ? [] : [`-c search_path=${schema}`]),
  ];
  return {
    connectionString: parsed.toString(),
    schema: schema ?? undefined,
    prepare: prepare === 'on',
    statementTimeoutMs,
    options: parts.length === 0 ? undefined : parts.join(' '),
  };
}

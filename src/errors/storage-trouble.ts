/**
 * What kind of storage trouble an error is, if any. A backing store that goes away (a
 * PostgreSQL restart or failover, a dropped connection) or runs out of room (a full disk) is an
 * expected state, not a bug: callers answer `503 service_unavailable` with `Retry-After` and
 * `details.reason` set to the kind, and recover by themselves once it is back.
 *
 * - `database_unavailable`: the database cannot be reached or just dropped the connection.
 * - `storage_full`: the database (or the disk under it) refused a write for lack of space.
 */
export type StorageTrouble = 'database_unavailable' | 'storage_full';

// PostgreSQL SQLSTATEs (Appendix A): class 08 is connection exceptions; 57P01 admin_shutdown
// (pg_ctl stop/restart -m fast), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or
// in recovery), 57P05 idle_session_timeout; 53100 disk_full, 53200 out_of_memory of the server
// is not ours to call full storage.
const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '57P05', '08000', '08001', '08003', '08004', '08006', '08007']);
const PG_FULL = '53100';
// Node's socket errors while connecting to or talking with the database.
const NET_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// pg and pg-pool report a lost or unobtainable connection as plain Errors, named by message only.
// 'Query read timeout': our client-side bound on a query (dialect.ts QUERY_TIMEOUT_MS) for a
// server that stopped answering; 'Client was closed…': a query on a connection that just died.
const PG_LOST = new RegExp(
  `^(${[
    'Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error',
    'Connection ended unexpectedly|terminating connection|Query read timeout|Client was closed and is not queryable',
  ].join('|')})`,
);

/**
 * Set (not enumerable, so never serialised or logged) on an error that came from the database's
 * own connection or files. A refused connection, a full disk or a dropped socket looks the same
 * from the S3 blob store, an SMTP relay or a webhook receiver: only where it was caught says
 * whose it was, and only the database's make the service unavailable or pause the worker.
 */
const FROM_DATABASE = Symbol('mailroom.fromDatabase');

/** Marks `err` as the database's (its pool, its schema client, its WAL file); returns it. */
export function fromDatabase<T>(err: T): T {
  if (typeof err === 'object' && err !== null && Object.isExtensible(err)) {
    Object.defineProperty(err, FROM_DATABASE, { value: true, enumerable: false });
  }
  return err;
}

function isFromDatabase(err: object): boolean {
  return (err as { [FROM_DATABASE]?: boolean })[FROM_DATABASE] === true;
}

/**
 * SQLSTATEs and SQLITE_FULL name the database whatever carried them. Node's network codes, pg's
 * message-only errors and ENOSPC count only on an error marked fromDatabase (or whose cause, at
 * any depth, is marked): an S3 PUT refused (ECONNREFUSED) or a full blob directory (ENOSPC) is
 * not the database away or full (README, "When PostgreSQL goes away").
 */
export function storageTrouble(err: unknown, tagged = false): StorageTrouble | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const ours = tagged || isFromDatabase(err);
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (code === PG_FULL || code === 'SQLITE_FULL' || (ours && code === 'ENOSPC')) return 'storage_full';
  if (typeof code === 'string' && PG_UNAVAILABLE.has(code)) return 'database_unavailable';
  if (ours && typeof code === 'string' && NET_UNAVAILABLE.has(code)) return 'database_unavailable';
  if (ours && typeof message === 'string' && PG_LOST.test(message)) return 'database_unavailable';
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err ? storageTrouble(cause, ours) : undefined;
}

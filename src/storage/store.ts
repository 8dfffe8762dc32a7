import { sql, type Kysely } from 'kysely';
import type { Clock } from '../domain/clock.js';
import { apiKeysRepo } from './api-keys.js';
import { migrate, openDatabase, type Dialect } from './dialect.js';
import { GroupCommit } from './group-commit.js';
import { idempotencyRepo } from './idempotency.js';
import { blockListRepo, suppressionsRepo } from './lists.js';
import { messagesRepo } from './messages.js';
import { organizationsRepo } from './organizations.js';
import { queueRepo } from './queue.js';
import type { Database } from './schema.js';
import { servicesRepo } from './services.js';
import { templatesRepo } from './templates.js';

function repos(db: Kysely<Database>, dialect: Dialect) {
  return {
    organizations: organizationsRepo(db),
    keys: apiKeysRepo(db),
    services: servicesRepo(db),
    templates: templatesRepo(db),
    suppressions: suppressionsRepo(db),
    blockList: blockListRepo(db),
    messages: messagesRepo(db),
    idempotency: idempotencyRepo(db),
    queue: queueRepo(db, dialect),
  };
}

/** What every repository offers, inside or outside a transaction. */
export type Repos = ReturnType<typeof repos> & { readonly db: Kysely<Database>; readonly dialect: Dialect };

/**
 * The storage seam. One implementation over Kysely serves SQLite and PostgreSQL; the dialect
 * shows only where SQL differs (row locks, claiming). Tests run the same suite on both.
 */
export interface Store extends Repos {
  readonly clock: Clock;
  /** Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T>;
  /** Cheap round trip for the health check. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function storeOver(db: Kysely<Database>, dialect: Dialect, clock: Clock): Store {
  const group = dialect === 'sqlite' ? new GroupCommit(db) : undefined;
  return {
    ...repos(db, dialect),
    db,
    dialect,
    clock,
    // PostgreSQL groups concurrent commits itself; SQLite's single writer needs our help.
    transaction: group !== undefined
      ? (fn) => group.run((conn) => fn({ ...repos(conn, dialect), db: conn, dialect }))
      : (fn) => db.transaction().execute((trx) => fn({ ...repos(trx, dialect), db: trx, dialect })),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await group?.drain();
      await db.destroy();
    },
  };
}

export interface OpenStoreOptions {
  clock: Clock;
  /** Apply pending migrations first (the server and `mailroom migrate` do; default true). */
  migrate?: boolean;
}

export async function openStore(url: string, options: OpenStoreOptions): Promise<Store> {
  const opened = await openDatabase(url);
  const { db, dialect } = opened;
  try {
    if (options.migrate !== false) await migrate(opened);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return storeOver(db, dialect, options.clock);
}

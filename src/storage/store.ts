import { sql, type Kysely } from 'kysely';
import type { Clock } from '../domain/clock.js';
import type { ApiKey, Organization, Service, Template } from '../domain/types.js';
import { adminSessionsRepo } from './admin-sessions.js';
import { apiKeysRepo } from './api-keys.js';
import { creditsRepo } from './credits.js';
import { migrate, openDatabase, type Dialect } from './dialect.js';
import { GroupCommit } from './group-commit.js';
import { idempotencyRepo } from './idempotency.js';
import { blockListRepo, suppressionsRepo } from './lists.js';
import { messagesRepo } from './messages.js';
import { organizationsRepo } from './organizations.js';
import { overviewRepo } from './overview.js';
import { providerEventsRepo } from './provider-events.js';
import { queueRepo } from './queue.js';
import { ReadCache } from './read-cache.js';
import type { CommitFollowUp } from './wal-keeper.js';
import type { Database } from './schema.js';
import { servicesRepo } from './services.js';
import { templatesRepo } from './templates.js';
import { templateVersionsRepo } from './template-versions.js';
import { uploadsRepo } from './uploads.js';
import { webhookTokensRepo } from './webhook-tokens.js';
import { webhookDeliveriesRepo } from './webhook-deliveries.js';
import { webhookEndpointsRepo } from './webhook-endpoints.js';

function repos(db: Kysely<Database>, dialect: Dialect) {
  const messages = messagesRepo(db, dialect);
  return {
    organizations: organizationsRepo(db),
    keys: apiKeysRepo(db),
    services: servicesRepo(db),
    templates: templatesRepo(db),
    templateVersions: templateVersionsRepo(db),
    suppressions: suppressionsRepo(db),
    blockList: blockListRepo(db),
    messages,
    credits: creditsRepo(db, dialect, messages),
    idempotency: idempotencyRepo(db, dialect),
    queue: queueRepo(db, dialect),
    uploads: uploadsRepo(db),
    webhookTokens: webhookTokensRepo(db),
    providerEvents: providerEventsRepo(db, dialect),
    webhookDeliveries: webhookDeliveriesRepo(db, dialect),
    webhookEndpoints: webhookEndpointsRepo(db),
    adminSessions: adminSessionsRepo(db),
    overview: overviewRepo(db),
  };
}

/**
 * What every repository offers, inside or outside a transaction. No raw database: SQL lives in
 * storage (a balance moves only through `credits`); tests reach rows via test/support/db.ts.
 */
export type Repos = ReturnType<typeof repos> & { readonly dialect: Dialect };

/**
 * The storage seam. One implementation over Kysely serves SQLite and PostgreSQL; the dialect
 * shows only where SQL differs (row locks, claiming). Tests run the same suite on both.
 */
export interface Store extends Repos {
  readonly clock: Clock;
  readonly catalog: CachedCatalog;
  /**
   * Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws.
   * Options, for the worker's own bookkeeping only (never for accepting a message):
   * - `durable: false` commits without waiting for the disk flush (a crash of the process
   *   loses nothing; a power cut may lose the last such commits, and a message is sent again);
   * - `background: true` is that, and may also wait a few ms to share a commit with others.
   */
  transaction<T>(fn: (tx: Repos) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Cheap round trip for the health check. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface TransactionOptions {
  durable?: boolean;
  background?: boolean;
}

/** How long a background write on SQLite may wait for others to share its commit. */
const BACKGROUND_LINGER_MS = 10;

/** See ReadCache: how stale another process's catalog change may look here. */
const CATALOG_TTL_MS = 1000;

/** Writers of the cached catalog clear the cache. */
function catalogAware(r: ReturnType<typeof repos>, cache: ReadCache, onWrite: () => void): ReturnType<typeof repos> {
  const clearing = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    cache.clear();
    onWrite();
    try {
      return await fn(...args);
    } finally {
      cache.clear();
    }
  };
  const { organizations: o, keys: k, services: s, templates: t } = r;
  return {
    ...r,
    organizations: { ...o, insert: clearing(o.insert), update: clearing(o.update), delete: clearing(o.delete) },
    keys: { ...k, insert: clearing(k.insert), setStatus: clearing(k.setStatus) },
    services: { ...s, put: clearing(s.put), delete: clearing(s.delete) },
    templates: { ...t, put: clearing(t.put), delete: clearing(t.delete) },
  };
}

/**
 * The catalog as the send path reads it on every request, through the ReadCache. Only for
 * deciding who calls and what to render: never for credits, which change with every send.
 */
export interface CachedCatalog {
  keyByValue(value: string): Promise<ApiKey | undefined>;
  organization(id: string): Promise<Organization | undefined>;
  template(orgId: string, id: string): Promise<Template | undefined>;
  service(orgId: string, id: string): Promise<Service | undefined>;
  defaultService(orgId: string): Promise<Service | undefined>;
}

function cachedCatalog(r: ReturnType<typeof repos>, cache: ReadCache): CachedCatalog {
  const key = (...parts: string[]) => parts.join('\u0000');
  return {
    keyByValue: (value) => cache.read(key('key', value), () => r.keys.findByValue(value)),
    organization: (id) => cache.read(key('org', id), () => r.organizations.get(id)),
    template: (orgId, id) => cache.read(key('tpl', orgId, id), () => r.templates.get(orgId, id)),
    service: (orgId, id) => cache.read(key('svc', orgId, id), () => r.services.get(orgId, id)),
    defaultService: (orgId) => cache.read(key('svcdef', orgId), () => r.services.getDefault(orgId)),
  };
}

export function storeOver(db: Kysely<Database>, dialect: Dialect, clock: Clock, file?: CommitFollowUp): Store {
  const group = dialect === 'sqlite' ? new GroupCommit(db, file) : undefined;
  const cache = new ReadCache(CATALOG_TTL_MS);
  // A transaction's catalog writes become visible at its commit: clear again once it is done
  // (a reader in between may have cached the old rows).
  const inTransaction = <T>(run: (makeRepos: (conn: Kysely<Database>) => Repos) => Promise<T>): Promise<T> => {
    let wrote = false;
    const makeRepos = (conn: Kysely<Database>): Repos => ({ ...catalogAware(repos(conn, dialect), cache, () => { wrote = true; }), dialect });
    return run(makeRepos).finally(() => {
      if (wrote) cache.clear();
    });
  };
  const base = repos(db, dialect);
  return {
    ...catalogAware(base, cache, () => undefined),
    catalog: cachedCatalog(base, cache),
    dialect,
    clock,
    // PostgreSQL groups concurrent commits itself; SQLite's single writer needs our help.
    transaction: group !== undefined
      ? (fn, options) => inTransaction((make) => group.run((conn) => fn(make(conn)), {
        lingerMs: options?.background === true ? BACKGROUND_LINGER_MS : 0,
        durable: options?.background !== true && options?.durable !== false,
      }))
      : (fn, options) => inTransaction((make) => db.transaction().execute(async (trx) => {
        if (options?.background === true || options?.durable === false) await sql`set local synchronous_commit = off`.execute(trx);
        return fn(make(trx));
      })),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await group?.drain();
      await file?.close();
      await db.destroy();
    },
  };
}

export interface OpenStoreOptions {
  clock: Clock;
  /** Apply pending migrations first (the server and `mailroom migrate` do; default true). */
  migrate?: boolean;
  /** Where the store reports trouble it copes with on its own (a stopped SQLite checkpoint thread). */
  warn?: (message: string) => void;
}

export async function openStore(url: string, options: OpenStoreOptions): Promise<Store> {
  const opened = await openDatabase(url, options.warn);
  const { db, dialect, file } = opened;
  try {
    if (options.migrate !== false) await migrate(opened);
  } catch (err) {
    await file?.close();
    await db.destroy();
    throw err;
  }
  return storeOver(db, dialect, options.clock, file);
}

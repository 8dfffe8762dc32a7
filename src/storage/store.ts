import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Clock } from '../domain/clock.js';
import type { ApiKey, Organization, Service, Template } from '../domain/types.js';
import { adminSessionsRepo } from './admin-sessions.js';
import { alertsRepo } from './alerts.js';
import { apiKeysRepo } from './api-keys.js';
import { creditsRepo } from './credits.js';
import { compiledOnce } from './compiled.js';
import { migrate, openDatabase, type Dialect } from './dialect.js';
import { StorageHealth } from './health.js';
import { GroupCommit } from './group-commit.js';
import { idempotencyRepo } from './idempotency.js';
import { KeyUseRecorder } from './key-use.js';
import { blockListRepo, listHitsRepo, suppressionsRepo } from './lists.js';
import { messagesRepo } from './messages.js';
import { organizationsRepo } from './organizations.js';
import { overviewRepo } from './overview.js';
import { providerEventsRepo } from './provider-events.js';
import { queueRepo } from './queue.js';
import { ReadCache } from './read-cache.js';
import { requestLogRepo } from './request-log.js';
import type { CommitFollowUp } from './wal-keeper.js';
import type { Database } from './schema.js';
import { servicesRepo } from './services.js';
import { simulatorEventsRepo } from './simulator-events.js';
import { templatesRepo } from './templates.js';
import { templateVersionsRepo } from './template-versions.js';
import { testInboxRepo } from './test-inbox.js';
import { uploadsRepo } from './uploads.js';
import { webhookTokensRepo } from './webhook-tokens.js';
import { webhookDeliveriesRepo } from './webhook-deliveries.js';
import { webhookEndpointsRepo } from './webhook-endpoints.js';

/** How each repository is built over a connection. */
function builders(db: Kysely<Database>, dialect: Dialect) {
  return {
    organizations: () => organizationsRepo(db, dialect),
    keys: () => apiKeysRepo(db, dialect),
    services: () => servicesRepo(db, dialect),
    templates: () => templatesRepo(db, dialect),
    templateVersions: () => templateVersionsRepo(db),
    suppressions: () => suppressionsRepo(db),
    blockList: () => blockListRepo(db),
    listHits: () => listHitsRepo(db, dialect),
    messages: () => messagesRepo(db, dialect),
    credits: () => creditsRepo(db, dialect, messagesRepo(db, dialect)),
    idempotency: () => idempotencyRepo(db, dialect),
    queue: () => queueRepo(db, dialect),
    uploads: () => uploadsRepo(db),
    webhookTokens: () => webhookTokensRepo(db),
    providerEvents: () => providerEventsRepo(db, dialect),
    webhookDeliveries: () => webhookDeliveriesRepo(db, dialect),
    webhookEndpoints: () => webhookEndpointsRepo(db),
    adminSessions: () => adminSessionsRepo(db),
    overview: () => overviewRepo(db),
    testInbox: () => testInboxRepo(db),
    simulatorEvents: () => simulatorEventsRepo(db),
    requestLog: () => requestLogRepo(db),
    alerts: () => alertsRepo(db),
  };
}

type Builders = ReturnType<typeof builders>;
type RepoSet = { [K in keyof Builders]: ReturnType<Builders[K]> };

/**
 * The repositories over one connection, each built on first use. A send's transaction uses
 * three of the eighteen (credits, messages, idempotency); building all of them per
 * transaction, with their closures, cost ~20–25 µs of a send's CPU in a --cpu-prof run
 * (webhookDeliveriesRepo alone ~19 µs). `wrap` may replace a repository once it is built.
 */
function repos(
  db: Kysely<Database>,
  dialect: Dialect,
  wrap: <K extends keyof RepoSet>(name: K, repo: RepoSet[K]) => RepoSet[K] = (_n, r) => r,
): RepoSet {
  const make = builders(db, dialect);
  const built: Partial<RepoSet> = {};
  const out = {} as RepoSet;
  for (const name of Object.keys(make) as Array<keyof RepoSet>) {
    Object.defineProperty(out, name, {
      enumerable: true,
      get: () => {
        const have = built[name];
        if (have !== undefined) return have;
        const repo = wrap(name, make[name]());
        Object.assign(built, { [name]: repo });
        return repo;
      },
    });
  }
  return out;
}

/**
 * What every repository offers, inside or outside a transaction. No raw database: SQL lives in
 * storage (a balance moves only through `credits`); tests reach rows via test/support/db.ts.
 */
export type Repos = RepoSet & { readonly dialect: Dialect };

/**
 * The storage seam. One implementation over Kysely serves SQLite and PostgreSQL; the dialect
 * shows only where SQL differs (row locks, claiming). Tests run the same suite on both.
 */
export interface Store extends Repos {
  readonly clock: Clock;
  readonly catalog: CachedCatalog;
  /** API keys' `last_used_at`, written at most once a minute per key by this process (issue 29). */
  readonly keyUse: KeyUseRecorder;
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
  /** Storage trouble this process saw last, while it lasts (src/storage/health.ts). */
  readonly health: StorageHealth;
  close(): Promise<void>;
}

export interface TransactionOptions {
  durable?: boolean;
  background?: boolean;
}

/** How long a background write on SQLite may wait for others to share its commit. */
const BACKGROUND_LINGER_MS = 10;

/** The catalog stamp (migration 0010), read before the cached catalog is trusted; see ReadCache. */
const catalogStamp = compiledOnce<Record<string, never>, { stamp: number | string }>((db) =>
  db.selectFrom('catalog_stamp').select('stamp').where('id', '=', 1),
);

type Wrap = <K extends keyof RepoSet>(name: K, repo: RepoSet[K]) => RepoSet[K];

/** Writers of the cached catalog clear the cache. */
function catalogAware(cache: ReadCache, onWrite: () => void): Wrap {
  const clearing =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      cache.clear();
      onWrite();
      try {
        return await fn(...args);
      } finally {
        cache.clear();
      }
    };
  const wrappers: { [K in keyof RepoSet]?: (repo: RepoSet[K]) => RepoSet[K] } = {
    organizations: (o) => ({ ...o, insert: clearing(o.insert), update: clearing(o.update), delete: clearing(o.delete) }),
    // Not markUsed: a key's last use is no catalog change (migration 0019).
    keys: (k) => ({ ...k, insert: clearing(k.insert), setStatus: clearing(k.setStatus), update: clearing(k.update) }),
    services: (s) => ({ ...s, put: clearing(s.put), delete: clearing(s.delete) }),
    templates: (t) => ({ ...t, put: clearing(t.put), delete: clearing(t.delete) }),
  };
  return (name, repo) => {
    // The record pairs each name with its own repository's wrapper.
    const wrap = wrappers[name] as ((r: typeof repo) => typeof repo) | undefined;
    return wrap === undefined ? repo : wrap(repo);
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

function cachedCatalog(r: RepoSet, cache: ReadCache): CachedCatalog {
  const key = (...parts: string[]) => parts.join('\u0000');
  return {
    keyByValue: (value) => cache.read(key('key', value), () => r.keys.findByValue(value)),
    organization: (id) => cache.read(key('org', id), () => r.organizations.get(id)),
    template: (orgId, id) => cache.read(key('tpl', orgId, id), () => r.templates.get(orgId, id)),
    service: (orgId, id) => cache.read(key('svc', orgId, id), () => r.services.get(orgId, id)),
    defaultService: (orgId) => cache.read(key('svcdef', orgId), () => r.services.getDefault(orgId)),
  };
}

// One simple-protocol query (no parameters, so PostgreSQL takes both statements at once).
const BEGIN_WITHOUT_FLUSH = CompiledQuery.raw('begin; set local synchronous_commit = off');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

/**
 * A PostgreSQL transaction whose COMMIT does not wait for the WAL flush (the worker's
 * bookkeeping: see Store.transaction). BEGIN and SET LOCAL go in one round trip: a claim or an
 * outcome is one statement, so this is 3 round trips instead of Kysely's 4 (goal 4, README).
 * Exported for test/storage/transaction-options.test.ts, which reads the setting inside.
 */
export async function withoutFlush<T>(db: Kysely<Database>, fn: (conn: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await conn.executeQuery(BEGIN_WITHOUT_FLUSH);
    let result: T;
    try {
      result = await fn(conn);
    } catch (err) {
      await conn.executeQuery(ROLLBACK).catch(() => undefined);
      throw err;
    }
    await conn.executeQuery(COMMIT);
    return result;
  });
}

export function storeOver(
  db: Kysely<Database>,
  dialect: Dialect,
  clock: Clock,
  file?: CommitFollowUp,
  health = new StorageHealth(),
): Store {
  const group = dialect === 'sqlite' ? new GroupCommit(db, file) : undefined;
  // PostgreSQL returns a bigint as a string; only equality matters.
  const cache = new ReadCache(async () => Number((await catalogStamp(db, dialect, {})).rows[0]?.stamp ?? 0));
  // A transaction's catalog writes become visible at its commit: clear again once it is done
  // (a reader in between may have cached the old rows).
  const inTransaction = <T>(run: (makeRepos: (conn: Kysely<Database>) => Repos) => Promise<T>): Promise<T> => {
    let wrote = false;
    const wrap = catalogAware(cache, () => {
      wrote = true;
    });
    const makeRepos = (conn: Kysely<Database>): Repos =>
      Object.defineProperty(repos(conn, dialect, wrap), 'dialect', { value: dialect, enumerable: true }) as Repos;
    // A commit shows the storage takes writes again (a full disk freed, the database back).
    return run(makeRepos)
      .then(
        (result) => {
          health.wrote();
          return result;
        },
        (err: unknown) => {
          health.report(err);
          throw err;
        },
      )
      .finally(() => {
        if (wrote) cache.clear();
      });
  };
  const base = repos(db, dialect);
  // PostgreSQL groups concurrent commits itself; SQLite's single writer needs our help.
  const transaction: Store['transaction'] =
    group !== undefined
      ? (fn, options) =>
          inTransaction((make) =>
            group.run((conn) => fn(make(conn)), {
              lingerMs: options?.background === true ? BACKGROUND_LINGER_MS : 0,
              durable: options?.background !== true && options?.durable !== false,
            }),
          )
      : (fn, options) =>
          inTransaction((make) =>
            options?.background === true || options?.durable === false
              ? withoutFlush(db, (conn) => fn(make(conn)))
              : db.transaction().execute((trx) => fn(make(trx))),
          );
  // Bookkeeping like the worker's: a use lost to a power cut is written again at the next one.
  const keyUse = new KeyUseRecorder((id, now) => transaction((tx) => tx.keys.markUsed(id, now), { background: true }));
  // Built once for the store's life, so every repository is built here (the spread reads them).
  return {
    ...repos(
      db,
      dialect,
      catalogAware(cache, () => undefined),
    ),
    catalog: cachedCatalog(base, cache),
    keyUse,
    dialect,
    clock,
    health,
    transaction,
    ping: async () => {
      try {
        await sql`select 1`.execute(db);
      } catch (err) {
        health.report(err);
        throw err;
      }
      health.reached();
    },
    close: async () => {
      await keyUse.idle();
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
  return storeOver(db, dialect, options.clock, file, opened.health);
}

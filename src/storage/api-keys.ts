import type { Kysely, Selectable } from 'kysely';
import { keyHint, newApiKey, newId, sha256 } from '../domain/ids.js';
import type { ApiKey, KeyCreator, KeyMode, KeyScope, KeyType } from '../domain/types.js';
import { keyCreatorColumn, keyModeColumn, keyScopeColumn, keyStatusColumn, keyTypeColumn } from './columns.js';
import { compiledOnce } from './compiled.js';
import type { Dialect } from './dialect.js';
import type { ApiKeysTable, Database } from './schema.js';

function toRecord(row: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: row.id,
    org_id: row.org_id,
    type: keyTypeColumn(row.type),
    mode: keyModeColumn(row.mode),
    public_key: row.public_key,
    hint: row.hint,
    status: keyStatusColumn(row.status),
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    expires_at: row.expires_at,
    name: row.name,
    scope: keyScopeColumn(row.scope),
    // PostgreSQL's BIGINT comes back as a number (src/storage/pg-options.ts); Number() keeps SQLite's too.
    last_used_at: row.last_used_at === null ? null : Number(row.last_used_at),
    created_by: keyCreatorColumn(row.created_by),
  };
}

/** A key's label, scope and maker, given when it is made (issue 29). */
export interface KeyDetails {
  name?: string | null | undefined;
  scope?: KeyScope | undefined;
  createdBy?: KeyCreator | undefined;
}

/** The least time between two writes of one key's `last_used_at` (issue 29: "at most once a minute"). */
export const KEY_USE_INTERVAL_MS = 60_000;

/** A newly made key: the only moment a private key's value exists outside the caller. */
export interface IssuedKey {
  key: ApiKey;
  value: string;
}

/** Read on a catalog miss of the send path: compiled once (building it cost ~15–20 µs). */
const byHash = compiledOnce<{ key_hash: string }, Selectable<ApiKeysTable>>((db, p) =>
  db.selectFrom('api_keys').selectAll().where('key_hash', '=', p('key_hash')),
);

export function apiKeysRepo(db: Kysely<Database>, dialect: Dialect) {
  const repo = {
    /** Any key with this value, whatever its status: auth tells rotated/revoked keys apart. */
    async findByValue(value: string): Promise<ApiKey | undefined> {
      const row = (await byHash(db, dialect, { key_hash: sha256(value) })).rows[0];
      return row === undefined ? undefined : toRecord(row);
    },

    async get(orgId: string, id: string): Promise<ApiKey | undefined> {
      const row = await db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toRecord(row);
    },

    async list(orgId: string): Promise<ApiKey[]> {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('org_id', '=', orgId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toRecord);
    },

    /**
     * Stores a key; `value` keeps a given key (config files pin them), else one is generated
     * (`pk_test_…`/`sk_test_…` for a test key).
     */
    async insert(
      orgId: string,
      type: KeyType,
      now: number,
      value?: string,
      mode: KeyMode = 'live',
      details: KeyDetails = {},
    ): Promise<IssuedKey> {
      const key = value ?? newApiKey(type, mode);
      const row: Selectable<ApiKeysTable> = {
        id: newId('key'),
        org_id: orgId,
        type,
        mode,
        key_hash: sha256(key),
        public_key: type === 'public' ? key : null,
        hint: keyHint(key, mode),
        status: 'active',
        created_at: now,
        revoked_at: null,
        expires_at: null,
        name: details.name ?? null,
        scope: details.scope ?? 'full',
        last_used_at: null,
        created_by: details.createdBy ?? null,
      };
      await db.insertInto('api_keys').values(row).execute();
      return { key: toRecord(row), value: key };
    },

    /**
     * Takes a key out of service. Rotation starts from an active key and may leave it working
     * until `expiresAt` (its grace period); revocation also ends a rotated key's grace period,
     * so a leaked old key can still be cut off at once. `expires_at` records when the key stops.
     */
    async setStatus(id: string, status: 'revoked' | 'rotated', now: number, expiresAt: number = now): Promise<void> {
      await db
        .updateTable('api_keys')
        .set({ status, revoked_at: now, expires_at: status === 'rotated' ? Math.max(now, expiresAt) : now })
        .where('id', '=', id)
        .where((eb) =>
          status === 'rotated'
            ? eb('status', '=', 'active')
            : eb.or([eb('status', '=', 'active'), eb.and([eb('status', '=', 'rotated'), eb('expires_at', '>', now)])]),
        )
        .execute();
    },

    /** Changes a key's label (null clears it) or scope; false when the organization has no such key. */
    async update(orgId: string, id: string, changes: { name?: string | null; scope?: KeyScope }): Promise<boolean> {
      if (changes.name === undefined && changes.scope === undefined) return (await repo.get(orgId, id)) !== undefined;
      const result = await db
        .updateTable('api_keys')
        .set(changes)
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /**
     * Records a use at `now` unless one within the last minute is already stored, so processes
     * that each write once a minute per key (src/storage/key-use.ts) do not add up to more
     * writes than that: the first of them wins, the others change no row. True when it wrote.
     * Not a catalog change: migration 0019's triggers leave the catalog stamp alone.
     */
    async markUsed(id: string, now: number): Promise<boolean> {
      const result = await db
        .updateTable('api_keys')
        .set({ last_used_at: now })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - KEY_USE_INTERVAL_MS)]))
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
  return repo;
}

import type { Kysely, Selectable } from 'kysely';
import { randomToken } from '../domain/ids.js';
import type { Service } from '../domain/types.js';
import { bool, int, parseJson } from './json.js';
import { compiledOnce } from './compiled.js';
import type { Dialect } from './dialect.js';
import type { Database, ServicesTable } from './schema.js';

export type ServiceFields = Pick<Service, 'provider' | 'settings' | 'is_default' | 'max_per_second'>;

function toRecord(row: Selectable<ServicesTable>): Service {
  return {
    org_id: row.org_id,
    id: row.id,
    provider: row.provider,
    settings: parseJson<Record<string, unknown>>(row.settings, `service ${row.org_id}/${row.id}`),
    is_default: bool(row.is_default),
    max_per_second: row.max_per_second,
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * The secret of a service's events URL: 24 random bytes (192 bits), base64url. Neither the org
 * id nor the service id is in the URL, so knowing those gives an attacker nothing.
 */
export const newEventsToken = (): string => randomToken(24);

/** Tokens are base64url of a fixed length; anything else is looked up nowhere. */
const isPlausibleEventsToken = (token: string): boolean => /^[A-Za-z0-9_-]{32}$/.test(token);

/** Read on a catalog miss of the send path: compiled once (building it cost ~15–20 µs). */
const byId = compiledOnce<{ org_id: string; id: string }, Selectable<ServicesTable>>((db, p) =>
  db.selectFrom('services').selectAll().where('org_id', '=', p('org_id')).where('id', '=', p('id')),
);
const byDefault = compiledOnce<{ org_id: string }, Selectable<ServicesTable>>((db, p) =>
  db.selectFrom('services').selectAll().where('org_id', '=', p('org_id')).where('is_default', '=', 1),
);

export function servicesRepo(db: Kysely<Database>, dialect: Dialect) {
  return {
    async get(orgId: string, id: string): Promise<Service | undefined> {
      const row = (await byId(db, dialect, { org_id: orgId, id })).rows[0];
      return row === undefined ? undefined : toRecord(row);
    },

    /**
     * Whether the service exists, holding its row (`FOR SHARE` on PostgreSQL) until the
     * transaction ends, so a concurrent delete waits for it; SQLite's single writer already
     * serialises the two. In a transaction only.
     */
    async lockShared(orgId: string, id: string): Promise<boolean> {
      const q = db.selectFrom('services').select('id').where('org_id', '=', orgId).where('id', '=', id);
      return (await (dialect === 'postgres' ? q.forShare() : q).executeTakeFirst()) !== undefined;
    },

    async getDefault(orgId: string): Promise<Service | undefined> {
      const row = (await byDefault(db, dialect, { org_id: orgId })).rows[0];
      return row === undefined ? undefined : toRecord(row);
    },

    async list(orgId: string): Promise<Service[]> {
      const rows = await db.selectFrom('services').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
      return rows.map(toRecord);
    },

    /**
     * Creates or replaces a service; the version moves on every write so workers rebuild their
     * transport. At most one default per organization: setting one clears the others.
     */
    async put(orgId: string, id: string, fields: ServiceFields, now: number): Promise<'created' | 'updated'> {
      if (fields.is_default) {
        await db
          .updateTable('services')
          .set({ is_default: 0 })
          .where('org_id', '=', orgId)
          .where('id', '!=', id)
          .where('is_default', '=', 1)
          .execute();
      }
      const columns = {
        provider: fields.provider,
        settings: JSON.stringify(fields.settings),
        is_default: int(fields.is_default),
        max_per_second: fields.max_per_second,
      };
      const updated = await db
        .updateTable('services')
        .set((eb) => ({ ...columns, version: eb('version', '+', 1), updated_at: now }))
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (updated.numUpdatedRows > 0n) return 'updated';
      await db
        .insertInto('services')
        .values({
          ...columns,
          org_id: orgId,
          id,
          version: 1,
          created_at: now,
          updated_at: now,
          events_token: newEventsToken(),
        })
        .execute();
      return 'created';
    },

    /** The service's events URL token; null only for a service that does not exist. */
    async eventsToken(orgId: string, id: string): Promise<string | null> {
      const row = await db
        .selectFrom('services')
        .select('events_token')
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row?.events_token ?? null;
    },

    /** The service whose events URL carries `token` (the provider event intake's lookup). */
    async findByEventsToken(token: string): Promise<Service | undefined> {
      if (!isPlausibleEventsToken(token)) return undefined;
      const row = await db.selectFrom('services').selectAll().where('events_token', '=', token).executeTakeFirst();
      return row === undefined ? undefined : toRecord(row);
    },

    /** A new token: the old URL stops working at once. Undefined when the service does not exist. */
    async rotateEventsToken(orgId: string, id: string, now: number): Promise<string | undefined> {
      const token = newEventsToken();
      const r = await db
        .updateTable('services')
        .set({ events_token: token, updated_at: now })
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n ? token : undefined;
    },

    async delete(orgId: string, id: string): Promise<boolean> {
      const r = await db.deleteFrom('services').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
  };
}

import type { Kysely, Selectable } from 'kysely';
import type { KeyType } from '../domain/types.js';
import { keyTypeColumn, uploadStatusColumn } from './columns.js';
import type { Database, UploadsTable } from './schema.js';

/** An upload as stored; the row itself, with its two string enums typed. */
export type Upload = Omit<Selectable<UploadsTable>, 'key_type' | 'status'> & {
  key_type: KeyType;
  status: 'pending' | 'uploaded';
};

const toRecord = (r: Selectable<UploadsTable>): Upload => ({
  ...r,
  key_type: keyTypeColumn(r.key_type),
  status: uploadStatusColumn(r.status),
});

export function uploadsRepo(db: Kysely<Database>) {
  return {
    async insert(u: Omit<Upload, 'status' | 'uploaded_at'>): Promise<void> {
      await db
        .insertInto('uploads')
        .values({ ...u, status: 'pending', uploaded_at: null })
        .execute();
    },

    /** By id alone: the signed PUT URL names no organization. */
    async byId(id: string): Promise<Upload | undefined> {
      const row = await db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toRecord(row);
    },

    async get(orgId: string, id: string): Promise<Upload | undefined> {
      const row = await db.selectFrom('uploads').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toRecord(row);
    },

    /** pending → uploaded, once: a second PUT to the same URL finds nothing to move. */
    async markUploaded(id: string, now: number): Promise<boolean> {
      const r = await db
        .updateTable('uploads')
        .set({ status: 'uploaded', uploaded_at: now })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    /** Bytes of public-key uploads an organization started since `since` (the daily budget). */
    async publicBytesSince(orgId: string, since: number): Promise<number> {
      const row = await db
        .selectFrom('uploads')
        .select((eb) => eb.fn.sum<number>('size').as('bytes'))
        .where('org_id', '=', orgId)
        .where('key_type', '=', 'public')
        .where('created_at', '>=', since)
        .executeTakeFirstOrThrow();
      return Number(row.bytes ?? 0);
    },

    async expired(now: number, limit: number): Promise<Upload[]> {
      const rows = await db.selectFrom('uploads').selectAll().where('expires_at', '<=', now).limit(limit).execute();
      return rows.map(toRecord);
    },

    async delete(id: string): Promise<void> {
      await db.deleteFrom('uploads').where('id', '=', id).execute();
    },
  };
}

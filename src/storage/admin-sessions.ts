import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * A signed-in operator UI browser, as stored: the cookie's id only as its HMAC-SHA256 keyed by
 * the admin token (src/admin/session.ts), so rows made under an older token match no cookie.
 * The column keeps its name `id_hash`: no migration, old rows just stop matching and expire.
 */
export interface AdminSession {
  idHash: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * The operator UI's sessions (migration 0007). Rows live in the database, not the process, so
 * every `mailroom serve` over one database honours a sign-in and a sign-out alike.
 */
export function adminSessionsRepo(db: Kysely<Database>) {
  return {
    async insert(s: AdminSession): Promise<void> {
      await db
        .insertInto('admin_sessions')
        .values({ id_hash: s.idHash, csrf_token: s.csrfToken, created_at: s.createdAt, expires_at: s.expiresAt })
        .execute();
    },

    /** The session unless it is unknown or expired at `now`. */
    async live(idHash: string, now: number): Promise<AdminSession | undefined> {
      const row = await db
        .selectFrom('admin_sessions')
        .selectAll()
        .where('id_hash', '=', idHash)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      // bigint columns may come back as strings from PostgreSQL drivers: read them as numbers.
      return {
        idHash: row.id_hash,
        csrfToken: row.csrf_token,
        createdAt: Number(row.created_at),
        expiresAt: Number(row.expires_at),
      };
    },

    async delete(idHash: string): Promise<void> {
      await db.deleteFrom('admin_sessions').where('id_hash', '=', idHash).execute();
    },

    /** Removes sessions expired at `now` (done on each sign-in: no job is needed for so few rows). */
    async purgeExpired(now: number): Promise<number> {
      const r = await db.deleteFrom('admin_sessions').where('expires_at', '<=', now).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
